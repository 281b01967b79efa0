// What the instance-administration tests share: an app with a tenant and an instance administrator.
import { before } from 'node:test';
import type { Config } from '../../src/config.ts';
import { signUp, type TestUser } from '../support/fixtures.ts';
import { useTenantApp, type TenantHarness } from '../support/harness.ts';

export interface AdminHarness extends TenantHarness {
  /** An instance administrator (member of no organization), signed in just now. */
  readonly operator: TestUser;
}

/** useTenantApp, plus an instance administrator made the way the bootstrap makes one (the flag on the account). */
export function useAdminApp(config: Partial<Config> = {}): AdminHarness {
  const t = useTenantApp({ config });
  let operator: TestUser | undefined;
  before(async () => {
    await t.ready;
    operator = await signUp(t.app.url, 'operator');
    await t.app.db.query('/* test */ UPDATE users SET is_instance_admin = true WHERE id = $1', [operator.userId]);
  });
  return Object.defineProperty(Object.create(t), 'operator', {
    get() {
      if (!operator) throw new Error('the operator is made in before(): use it inside a test');
      return operator;
    },
  }) as AdminHarness;
}

/** Every page of a /v1/admin list, following its cursor. */
export async function allPages(
  t: TenantHarness,
  token: string,
  path: string,
  key: 'people' | 'organizations',
): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: { status: number; body: any; text: string } = await t
      .as(token)
      .get(`${path}${cursor ? `${separator}cursor=${cursor}` : ''}`);
    if (page.status !== 200) throw new Error(`${path}: ${page.status} ${page.text}`);
    rows.push(...page.body[key]);
    cursor = page.body.nextCursor;
  } while (cursor);
  return rows;
}
