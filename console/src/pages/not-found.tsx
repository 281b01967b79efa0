import { Link } from '../router.tsx';

/** A path no page of the console answers (a mistyped or outdated link). */
export function NotFoundPage({ path }: { path: string }) {
  return (
    <section aria-labelledby="not-found-heading">
      <h1 id="not-found-heading">Page not found</h1>
      <p>
        The console has no page at <code>{path}</code>. The link may be mistyped, or the page may have moved.
      </p>
      <p>
        <Link href="/">Go to the console's home page</Link>
      </p>
    </section>
  );
}
