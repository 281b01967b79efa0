// The console's router: routes are plain paths with `:name` parameters (the server answers the
// console's HTML for any path), matched in the order of the route table (routes.tsx); <Link> and
// navigate() move between them without reloading. A few lines of our own rather than a library.
import type { AnchorHTMLAttributes } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** The parameter names of a pattern: '/bots/:connectionId' has 'connectionId'. */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;
export type Params<P extends string> = { [Name in ParamNames<P>]: string };

/** The parameters of `path` under `pattern`, decoded; null when the path is not the pattern's. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const wanted = pattern.split('/');
  // A trailing slash names the same page ('/bots/' is '/bots').
  const given = (path.length > 1 ? path.replace(/\/+$/, '') : path).split('/');
  if (wanted.length !== given.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of wanted.entries()) {
    const value = given[index] ?? '';
    if (!part.startsWith(':')) {
      if (part !== value) return null;
      continue;
    }
    if (!value) return null;
    try {
      params[part.slice(1)] = decodeURIComponent(value);
    } catch {
      return null; // a malformed escape is no page's parameter
    }
  }
  return params;
}

/** Goes to `path` in this tab; `replace` leaves no history entry (a page that only forwards). */
export function navigate(path: string, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current path, rendering again when it changes (a link, navigate(), the Back button). */
export function usePath(): string {
  const [, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  // Read at each render: a page may have replaced the address without an event (the SSO callback does).
  return location.pathname;
}

/**
 * A link within the console: a plain <a> (so it can be opened in a new tab, copied, read by screen
 * readers as a link) that navigates without reloading on a plain click.
 */
export function Link({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  return (
    <a
      {...rest}
      href={href}
      onClick={(event) => {
        onClick?.(event);
        const modified = event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey;
        if (event.defaultPrevented || modified) return;
        event.preventDefault();
        navigate(href);
      }}
    />
  );
}
