// The permission catalog as people read it: keys grouped by area (the part of the key before the dot).
import { api, type components } from '../../api.ts';
import { useQuery } from '../../data.ts';

export type Permission = components['schemas']['PermissionCatalog']['permissions'][number];

export const areaOf = (key: string) => key.slice(0, key.indexOf('.'));

/** The area's heading: `api_keys` reads "API keys", `mcp_connections` "MCP connections". */
export function areaLabel(area: string): string {
  const words = area
    .split('_')
    .map((word) => (['api', 'mcp', 'sso', 'scim'].includes(word) ? word.toUpperCase() : word));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The catalog's keys by area, in the catalog's order. */
export function byArea(permissions: Permission[]): [string, Permission[]][] {
  const areas = new Map<string, Permission[]>();
  for (const permission of permissions) {
    const area = areaOf(permission.key);
    areas.set(area, [...(areas.get(area) ?? []), permission]);
  }
  return [...areas];
}

export function useCatalog() {
  return useQuery(() => api.GET('/v1/permissions'), [], { select: (data) => data.permissions });
}

/** A sensitive key's mark: writes under it need a recent sign-in, so a person's session, never an API key. */
export function SensitiveMark() {
  return (
    <span class="sensitive" title="Changes made with it need a recent sign-in">
      sensitive
    </span>
  );
}

export function Catalog({ permissions }: { permissions: Permission[] }) {
  return (
    <section aria-labelledby="catalog-heading" class="card">
      <h2 id="catalog-heading">Permission catalog</h2>
      <p class="muted">
        Every key a role may hold. Changes under a key marked sensitive need a recent sign-in. The owner holds every
        key.
      </p>
      {byArea(permissions).map(([area, keys]) => (
        <section key={area} aria-labelledby={`area-${area}`} class="catalog-area">
          <h3 id={`area-${area}`}>{areaLabel(area)}</h3>
          <dl class="catalog">
            {keys.map((permission) => (
              <div key={permission.key}>
                <dt>
                  <code>{permission.key}</code> {permission.sensitive && <SensitiveMark />}
                </dt>
                <dd>
                  {permission.description}
                  <span class="muted"> · built-in: {['owner', ...permission.defaultRoles].join(', ')}</span>
                </dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
    </section>
  );
}
