// Every account on the instance, searched by the start of an e-mail or name, a page at a time.
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../../api.ts';
import { useList } from '../../data.ts';
import { submitted } from '../../forms.tsx';
import { AdminRefused } from './refused.tsx';

export function InstancePeoplePage() {
  const [input, setInput] = useState('');
  const [search, setSearch] = useState('');
  const list = useList(
    (cursor) => api.GET('/v1/admin/people', { params: { query: { limit: 50, cursor, search: search || undefined } } }),
    (page) => page.people,
    [search],
    { pageByPage: true },
  );
  const people = list.items;
  return (
    <section aria-labelledby="people-heading">
      <h1 id="people-heading">People</h1>
      <form class="inline-form" aria-label="Search people" onSubmit={submitted(() => setSearch(input.trim()))}>
        <div class="field">
          <label for="people-search">E-mail or name starts with</label>
          <input
            id="people-search"
            type="search"
            value={input}
            onInput={(event) => setInput((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit">Search</button>
      </form>
      {list.error?.error === 'forbidden' ? (
        <AdminRefused />
      ) : list.error ? (
        <p role="alert" class="form-error">
          {errorMessage(list.error)}
        </p>
      ) : null}
      {!people && !list.error && <p>Loading…</p>}
      {people?.length === 0 && (
        <p>{search ? `Nobody's e-mail or name starts with “${search}”.` : 'No accounts yet.'}</p>
      )}
      {people && people.length > 0 && (
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">People</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">E-mail</th>
                <th scope="col">Organizations</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Administrator</th>
              </tr>
            </thead>
            <tbody>
              {people.map((person) => (
                <tr key={person.id}>
                  <td>{person.name}</td>
                  <td>{person.email}</td>
                  <td>{person.organizations}</td>
                  <td>
                    {person.lastAuthenticatedAt ? new Date(person.lastAuthenticatedAt).toLocaleString() : 'never'}
                  </td>
                  <td>{person.isInstanceAdmin ? 'yes' : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.more && (
        <button type="button" class="secondary" disabled={list.fetching !== null} onClick={list.more}>
          More people
        </button>
      )}
    </section>
  );
}
