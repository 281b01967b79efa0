// The instance at a glance, for its administrators: how many people and organizations, who signed in
// lately, and what needs one of them.
import { api, errorMessage } from '../../api.ts';
import { useQuery } from '../../data.ts';
import { AdminRefused } from './refused.tsx';

export function InstanceOverviewPage() {
  const read = useQuery(() => api.GET('/v1/admin/overview'), []);
  const overview = read.data;
  return (
    <section aria-labelledby="overview-heading">
      <h1 id="overview-heading">Instance overview</h1>
      {read.error?.error === 'forbidden' ? (
        <AdminRefused />
      ) : read.error ? (
        <p role="alert" class="form-error">
          {errorMessage(read.error)}
        </p>
      ) : !overview ? (
        <p>Loading…</p>
      ) : (
        <>
          <dl class="figures">
            <div>
              <dt>People</dt>
              <dd>{overview.people}</dd>
            </div>
            <div>
              <dt>Organizations</dt>
              <dd>{overview.organizations}</dd>
            </div>
            <div>
              <dt>Active today</dt>
              <dd>{overview.activePeople.d1}</dd>
            </div>
            <div>
              <dt>Active, 7 days</dt>
              <dd>{overview.activePeople.d7}</dd>
            </div>
            <div>
              <dt>Active, 30 days</dt>
              <dd>{overview.activePeople.d30}</dd>
            </div>
          </dl>
          <p class="hint">
            Active: signed in or re-authenticated in that time. Workers and LLM spend are not tracked yet (
            {overview.workersRunning} workers, ${overview.llmSpendUsd30d} over 30 days).
          </p>
          <h2>Needs attention</h2>
          {overview.attention.length === 0 ? (
            <p>Nothing needs attention.</p>
          ) : (
            <ul>
              {overview.attention.map((item) => (
                <li key={item.code}>{item.message}</li>
              ))}
            </ul>
          )}
          <p class="hint">As of {new Date(overview.generatedAt).toLocaleString()}.</p>
        </>
      )}
    </section>
  );
}
