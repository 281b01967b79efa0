// How pages talk to the API, in the shape of TanStack Query's hooks (a few lines of our own instead of
// the library's bytes): useQuery reads one resource, useList reads a list through the API's cursors,
// useMutation changes something and says so. The API's errors are typed here, once: a page gets an
// ApiError, never `unknown`.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from './api.ts';

/** What an openapi-fetch call answers: `data` on success, the API's error shape in `error` otherwise. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
}

// Every answer of the API that is not a success carries `{error, message}` (docs/api): the one place
// that says so to the type checker.
const errorOf = (answer: Answer<unknown>) => answer.error as ApiError | undefined;

const unreachable: ApiError = {
  error: 'unreachable',
  message: 'The server could not be reached. Check your connection and try again.',
};

/** Runs a call and settles it: a request that never got an answer is an error like the API's. */
async function settle<T>(call: () => Promise<Answer<T>>): Promise<{ data: T } | { error: ApiError }> {
  try {
    const answer = await call();
    const error = errorOf(answer);
    // A 204 has no body: success without data.
    return error ? { error } : { data: answer.data as T };
  } catch {
    return { error: unreachable };
  }
}

export interface Query<T> {
  /** undefined until the first read answers. */
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  /** Reads again; a failure keeps what was shown and sets `error`. Resolves with what this read got. */
  refetch: () => Promise<{ data?: T; error?: ApiError }>;
  /** Shows a value the page already has (the answer of its own change), as if read. */
  setData: (data: T) => void;
}

/**
 * Reads `read` when the page opens and whenever `deps` change (another organization: what was shown
 * goes at once, and an answer for the earlier one is dropped). `absent` names an error code that means
 * "there is none yet" (such as sso_connection_not_found): the data is then null, not an error.
 * `select` picks what the page shows out of the answer. `keepPrevious` keeps what is shown while `deps`
 * change (the same resource read again, not another one) as TanStack's placeholderData: keepPreviousData.
 */
export function useQuery<Raw, T = Raw>(
  read: () => Promise<Answer<Raw>>,
  deps: unknown[],
  { absent, select, keepPrevious = false }: { absent?: string; select?: (data: Raw) => T; keepPrevious?: boolean } = {},
): Query<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const latest = useRef(read);
  latest.current = read;
  const generation = useRef(0);

  async function refetch(): Promise<{ data?: T; error?: ApiError }> {
    const mine = ++generation.current;
    const answer = await settle(() => latest.current());
    let result: { data?: T; error?: ApiError };
    if ('data' in answer) result = { data: select ? select(answer.data) : (answer.data as unknown as T) };
    // The caller that names `absent` reads a `T | null`.
    else if (absent && answer.error.error === absent) result = { data: null as T };
    else result = { error: answer.error };
    // An answer for what the page no longer shows (another organization) is dropped.
    if (mine !== generation.current) return {};
    if (result.error) setState((shown) => ({ ...shown, error: result.error, loading: false }));
    else setState({ data: result.data, loading: false });
    return result;
  }
  useEffect(() => {
    setState((shown) => (keepPrevious ? { ...shown, loading: true } : { loading: true }));
    void refetch();
  }, deps);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    refetch,
    setData: (data) => setState({ data, loading: false }),
  };
}

type Paged = { nextCursor?: string | null };

/**
 * The console's one walk through the API's cursors: from `cursor` (the first page when undefined),
 * every page (`all`) or just one; the items with the cursor of the page after them.
 */
export async function readPages<Page extends Paged, Item>(
  read: (cursor: string | undefined) => Promise<Answer<Page>>,
  items: (page: Page) => Item[],
  { cursor, all }: { cursor?: string | undefined; all: boolean },
): Promise<{ items: Item[]; next: string | undefined } | { error: ApiError }> {
  const found: Item[] = [];
  let next = cursor;
  do {
    const answer = await settle(() => read(next));
    if ('error' in answer) return answer;
    found.push(...items(answer.data));
    next = answer.data.nextCursor ?? undefined;
  } while (all && next);
  return { items: found, next };
}

export interface List<Item, Page extends Paged = Paged> {
  /** undefined until the first page answers. */
  items: Item[] | undefined;
  error: ApiError | undefined;
  /** What is being read: the list from its start, or the next page onto it. */
  fetching: 'start' | 'more' | null;
  /** The next page onto the list, for a list read page by page that has one; else undefined. */
  more: (() => Promise<void>) | undefined;
  /**
   * Reads the list again from its start, with `read` from now on when given (other filters); a failure
   * keeps the list shown. Resolves whether it succeeded.
   */
  reload: (read?: (cursor: string | undefined) => Promise<Answer<Page>>) => Promise<boolean>;
}

/**
 * A list the API pages with `nextCursor`. By default every page is read (the console's lists hold tens
 * of items); `pageByPage` reads one page at a time, with `more` for the next (audit events, memories).
 */
export function useList<Page extends Paged, Item>(
  read: (cursor: string | undefined) => Promise<Answer<Page>>,
  items: (page: Page) => Item[],
  deps: unknown[],
  { pageByPage = false }: { pageByPage?: boolean } = {},
): List<Item, Page> {
  const [state, setState] = useState<{ items?: Item[]; next?: string; error?: ApiError }>({});
  const [fetching, setFetching] = useState<List<Item>['fetching']>(null);
  const reader = useRef(read);
  const generation = useRef(0);

  async function fetchFrom(cursor: string | undefined): Promise<boolean> {
    const mine = ++generation.current;
    setFetching(cursor ? 'more' : 'start');
    const answer = await readPages(reader.current, items, { cursor, all: !pageByPage });
    if (mine !== generation.current) return false;
    setFetching(null);
    if ('error' in answer) {
      setState((shown) => ({ ...shown, error: answer.error }));
      return false;
    }
    setState((shown) => ({
      items: cursor ? [...(shown.items ?? []), ...answer.items] : answer.items,
      next: answer.next,
    }));
    return true;
  }
  useEffect(() => {
    reader.current = read;
    setState({});
    void fetchFrom(undefined);
  }, deps);
  return {
    items: state.items,
    error: state.error,
    fetching,
    more: pageByPage && state.next ? () => fetchFrom(state.next).then(() => {}) : undefined,
    reload: (read) => {
      if (read) reader.current = read;
      return fetchFrom(undefined);
    },
  };
}

/** A page's status line (role="status", which screen readers announce): what runs, then what it did. */
export function useStatus() {
  const [state, setState] = useState<{ message: string; owner?: object }>({ message: '' });
  return { ...state, set: setState, say: (message: string) => setState({ message }) };
}
export type Status = ReturnType<typeof useStatus>;

type Say<A extends unknown[]> = string | ((...args: A) => string);

export interface MutationOptions<A extends unknown[], T> {
  /** Said while the call runs. */
  progress?: Say<A>;
  /** Said once it succeeded, after `onSuccess` finished: the page already shows what the sentence speaks of. */
  success?: string | ((data: T, ...args: A) => string);
  /** What follows a success (a list read again, a page left); awaited while the action still counts as pending. */
  onSuccess?: (data: T, ...args: A) => unknown;
  /** The API's error reshaped for the page (a message moved beside the field it concerns). */
  mapError?: (error: ApiError) => ApiError;
  /**
   * The page's status line when several actions share it: starting one hides the error of the one
   * before, as one action replaces another on screen.
   */
  status?: Status;
}

export interface Mutation<A extends unknown[]> {
  /** Runs the call; resolves whether it succeeded (its answer goes to `onSuccess`). */
  mutate: (...args: A) => Promise<boolean>;
  pending: boolean;
  error: ApiError | undefined;
  /** The status line's message (the shared one's when `status` was given). */
  status: string;
  reset: () => void;
}

/** A change through the API: pending while it runs, its error, its progress and outcome announced. */
export function useMutation<A extends unknown[], T>(
  call: (...args: A) => Promise<Answer<T>>,
  options: MutationOptions<A, T> = {},
): Mutation<A> {
  const own = useStatus();
  const status = options.status ?? own;
  const [self] = useState(() => ({}));
  const [state, setState] = useState<{ pending: boolean; error?: ApiError }>({ pending: false });

  async function mutate(...args: A): Promise<boolean> {
    const { progress, success, onSuccess, mapError } = options;
    setState({ pending: true });
    status.set({ message: typeof progress === 'function' ? progress(...args) : (progress ?? ''), owner: self });
    const answer = await settle(() => call(...args));
    if ('error' in answer) {
      setState({ pending: false, error: mapError ? mapError(answer.error) : answer.error });
      status.set({ message: '', owner: self });
      return false;
    }
    await onSuccess?.(answer.data, ...args);
    setState({ pending: false });
    status.set({
      message: typeof success === 'function' ? success(answer.data, ...args) : (success ?? ''),
      owner: self,
    });
    return true;
  }
  return {
    mutate,
    pending: state.pending,
    error: status.owner === self ? state.error : undefined,
    status: status.message,
    reset: () => {
      setState({ pending: false });
      status.set({ message: '' });
    },
  };
}
