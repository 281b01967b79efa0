// Every organization on the instance, searched by the start of its name (or its id), with its plan,
// which an instance administrator changes here.
import { useState } from 'preact/hooks';
import { api, errorMessage, type components } from '../../api.ts';
import { useList, useMutation, useStatus } from '../../data.ts';
import { submitted } from '../../forms.tsx';
import { AdminRefused } from './refused.tsx';

type Organization = components['schemas']['AdminOrganization'];
type Plan = Organization['plan'];
const plans: Plan[] = ['free', 'team', 'enterprise'];

export function InstanceOrganizationsPage() {
  const [input, setInput] = useState('');
  const [search, setSearch] = useState('');
  const list = useList(
    (cursor) =>
      api.GET('/v1/admin/organizations', { params: { query: { limit: 50, cursor, search: search || undefined } } }),
    (page) => page.organizations,
    [search],
    { pageByPage: true },
  );
  // Plans as changed on this page, over what the list read.
  const [changed, setChanged] = useState<Record<string, Plan>>({});
  const status = useStatus();
  const setPlan = useMutation(
    (organization: Organization, plan: Plan) =>
      api.PATCH('/v1/admin/organizations/{organizationId}', {
        params: { path: { organizationId: organization.id } },
        body: { plan },
      }),
    {
      status,
      progress: (organization, plan) => `Moving ${organization.name} to the ${plan} plan…`,
      success: (data) => `${data.organization.name} is on the ${data.organization.plan} plan.`,
      onSuccess: (data) => setChanged((shown) => ({ ...shown, [data.organization.id]: data.organization.plan })),
    },
  );
  const organizations = list.items;
  const error = setPlan.error ?? list.error;
  return (
    <section aria-labelledby="organizations-heading">
      <h1 id="organizations-heading">Organizations</h1>
      <p class="hint">The plan decides what an organization may turn on: SSO needs enterprise.</p>
      <form class="inline-form" aria-label="Search organizations" onSubmit={submitted(() => setSearch(input.trim()))}>
        <div class="field">
          <label for="organizations-search">Name starts with, or id</label>
          <input
            id="organizations-search"
            type="search"
            value={input}
            onInput={(event) => setInput((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit">Search</button>
      </form>
      <p role="status">{status.message}</p>
      {error?.error === 'forbidden' ? (
        <AdminRefused />
      ) : error ? (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      ) : null}
      {!organizations && !list.error && <p>Loading…</p>}
      {organizations?.length === 0 && (
        <p>{search ? `No organization's name starts with “${search}”.` : 'No organizations yet.'}</p>
      )}
      {organizations && organizations.length > 0 && (
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">Organizations</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Members</th>
                <th scope="col">Created</th>
                <th scope="col">Plan</th>
              </tr>
            </thead>
            <tbody>
              {organizations.map((organization) => (
                <tr key={organization.id}>
                  <td>
                    {organization.name}
                    <br />
                    <code class="id">{organization.id}</code>
                  </td>
                  <td>{organization.members}</td>
                  <td>{new Date(organization.createdAt).toLocaleDateString()}</td>
                  <td>
                    <select
                      aria-label={`Plan of ${organization.name}`}
                      value={changed[organization.id] ?? organization.plan}
                      disabled={setPlan.pending}
                      onChange={(event) =>
                        setPlan.mutate(organization, (event.target as HTMLSelectElement).value as Plan)
                      }
                    >
                      {plans.map((plan) => (
                        <option key={plan} value={plan}>
                          {plan}
                        </option>
                      ))}
                    </select>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.more && (
        <button type="button" class="secondary" disabled={list.fetching !== null} onClick={list.more}>
          More organizations
        </button>
      )}
    </section>
  );
}
