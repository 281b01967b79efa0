// /memory: the signed-in person's own memories in the active organization (nobody else, admins
// included, can read them): add, search with the matching words marked, delete.
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type ApiError, type components } from '../../api.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { useList, useMutation, useStatus } from '../../data.ts';
import { Field, FormError, submitted } from '../../forms.tsx';
import { hasMatch, MarkedText } from './memory-marks.tsx';

type Memory = components['schemas']['Memory'];
type Found = components['schemas']['MemorySearchResult'];

const tagsOf = (text: string) =>
  text
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
const excerpt = (content: string) => (content.length > 40 ? `${content.slice(0, 40)}…` : content);

/** The tags are typed in one field, so the API's messages about one tag (`tags.2`) are shown there, naming it. */
function tagErrorsOnTheField(error: ApiError): ApiError {
  if (!error.details) return error;
  return {
    ...error,
    details: error.details.map((detail) =>
      detail.path[0] === 'tags' && detail.path.length > 1
        ? { ...detail, path: ['tags'], message: `Tag ${Number(detail.path[1]) + 1}: ${detail.message}` }
        : detail,
    ),
  };
}

export function MemoryPage({ organizationId }: { organizationId: string }) {
  const [content, setContent] = useState('');
  const [tags, setTags] = useState('');
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState<{ q: string; results: Found[] } | null>(null);
  const [deleting, setDeleting] = useState<Memory | Found | null>(null);
  // The bank is the one of the session's active organization: switching it shows another bank.
  const list = useList(
    (cursor) => api.GET('/v1/memory', { params: { query: { limit: 50, cursor } } }),
    (page) => page.memories,
    [organizationId],
    { pageByPage: true },
  );
  const memories = list.items ?? null;
  const status = useStatus();
  useEffect(() => {
    setSearch(null);
    status.say('');
  }, [organizationId]);

  const searching = useMutation((q: string) => api.GET('/v1/memory/search', { params: { query: { q, limit: 50 } } }), {
    status,
    progress: 'Searching…',
    onSuccess: (data, q) => setSearch({ q, results: data.results }),
  });
  // After a change the results shown are read again (a failure keeps them: the change itself is announced).
  async function refreshSearch() {
    if (!search) return;
    const answer = await api.GET('/v1/memory/search', { params: { query: { q: search.q, limit: 50 } } });
    if (answer.data) setSearch({ q: search.q, results: answer.data.results });
  }
  const add = useMutation(() => api.POST('/v1/memory', { body: { content, tags: tagsOf(tags) } }), {
    status,
    progress: 'Adding the memory…',
    success: 'Memory added.',
    mapError: tagErrorsOnTheField,
    onSuccess: async () => {
      setContent('');
      setTags('');
      await list.reload();
      await refreshSearch();
    },
  });
  const remove = useMutation(
    (memory: Memory | Found) => api.DELETE('/v1/memory/{id}', { params: { path: { id: memory.id } } }),
    {
      status,
      progress: 'Deleting the memory…',
      success: (_, memory) => `The memory “${excerpt(memory.content)}” was deleted.`,
      onSuccess: async () => {
        await list.reload();
        await refreshSearch();
      },
    },
  );
  const busy = add.pending || searching.pending || remove.pending;
  const addError = add.error;
  const searchError = searching.error;
  const loadError = remove.error ?? list.error;

  // Read again: assistants may have written memories while the search was shown.
  async function showAll() {
    setSearch(null);
    setQuery('');
    await list.reload();
  }

  const item = (memory: Memory | Found, q?: string) => (
    <li key={memory.id} class="memory">
      <p class="memory-content">{q ? <MarkedText text={memory.content} query={q} /> : memory.content}</p>
      {q && !hasMatch(memory.content, q) && (
        <p class="muted">Found through related words: none of your words appear in it.</p>
      )}
      <div class="memory-meta">
        {memory.tags.length > 0 && (
          <ul class="tags" aria-label="Tags">
            {memory.tags.map((tag) => (
              <li key={tag}>{tag}</li>
            ))}
          </ul>
        )}
        <span class="muted">
          {memory.source} · {memory.scope} ·{' '}
          <time dateTime={memory.createdAt}>{new Date(memory.createdAt).toLocaleString()}</time>
        </span>
        <button
          type="button"
          class="secondary"
          disabled={busy}
          aria-label={`Delete the memory “${excerpt(memory.content)}”`}
          onClick={() => setDeleting(memory)}
        >
          Delete
        </button>
      </div>
    </li>
  );

  return (
    <section aria-labelledby="memory-heading">
      <h1 id="memory-heading">Memory</h1>
      <p>
        Your own memories in this organization: facts, preferences and decisions your assistants can look up. Nobody
        else can read them, admins included.
      </p>
      <form class="memory-add" onSubmit={submitted(add.mutate)} noValidate aria-label="Add a memory">
        <Field
          label="Memory"
          name="content"
          multiline
          value={content}
          onInput={setContent}
          error={addError}
          autoComplete="off"
        />
        <Field
          label="Tags (optional, separated by commas)"
          name="tags"
          value={tags}
          onInput={setTags}
          error={addError}
          required={false}
          autoComplete="off"
        />
        <button type="submit" disabled={busy}>
          Add memory
        </button>
      </form>
      <FormError error={addError} />
      <search aria-label="Memory search">
        <form class="inline-form" onSubmit={submitted(() => searching.mutate(query))} noValidate>
          <Field
            label="Search your memories"
            name="q"
            type="text"
            value={query}
            onInput={setQuery}
            error={searchError}
            autoComplete="off"
          />
          <button type="submit" disabled={busy}>
            Search
          </button>
          {search && (
            <button type="button" class="secondary" onClick={showAll}>
              Show all memories
            </button>
          )}
        </form>
      </search>
      <FormError error={searchError} />
      <p role="status">{status.message}</p>
      {loadError && (
        <p role="alert" class="form-error">
          {errorMessage(loadError)}
        </p>
      )}
      {search ? (
        <section aria-labelledby="memory-results-heading">
          <h2 id="memory-results-heading">Results for “{search.q}”</h2>
          {search.results.length === 0 ? (
            <p class="empty">No memory matches “{search.q}”. Try other words, or show all memories.</p>
          ) : (
            <ol class="memories" aria-label="Search results, most relevant first">
              {search.results.map((found) => item(found, search.q))}
            </ol>
          )}
        </section>
      ) : (
        <>
          {memories === null && !loadError && <p aria-live="polite">Loading your memories…</p>}
          {memories?.length === 0 && (
            <p class="empty">
              No memories yet. Add one above, a sentence each (“Prefers answers in French”, “The release freezes on
              Thursdays”); assistants can add them too, through the API.
            </p>
          )}
          {memories && memories.length > 0 && (
            <ul class="memories" aria-label="Your memories, newest first">
              {memories.map((memory) => item(memory))}
            </ul>
          )}
          {list.more && (
            <button type="button" class="secondary more" onClick={list.more}>
              Load older memories
            </button>
          )}
        </>
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this memory?"
          message={`“${excerpt(deleting.content)}” will be deleted and no longer found by searches. This cannot be undone.`}
          confirmLabel="Delete memory"
          onConfirm={() => {
            setDeleting(null);
            void remove.mutate(deleting);
          }}
          onCancel={() => setDeleting(null)}
        />
      )}
    </section>
  );
}
