// A module's register function (its index.ts) names the dependencies it cannot work without, so that
// an app wired without one fails as it boots, naming the module and what it lacks, rather than at the
// first request that needs it.

/** Throws at boot when `deps` lacks one of `names`. */
export function requireDependencies<T extends object>(
  module: string,
  deps: T,
  names: readonly (keyof T & string)[],
): void {
  const missing = names.filter((name) => deps[name] === undefined || deps[name] === null);
  if (missing.length > 0) throw new Error(`${module}: registered without ${missing.join(', ')}`);
}
