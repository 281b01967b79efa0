// One call gives a test file a running app with a tenant in it: the real server on this run's backend
// (ORGPLANE_TEST_BACKEND), an organization with an owner, an admin and a member, an outsider, and
// another organization's admin. It is started before the file's first test and closed after its last.
import { after, before } from 'node:test';
import type { Config } from '../../src/config.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';
import { createTenant, type Tenant } from './fixtures.ts';
import { api } from './http.ts';

export interface TenantHarness {
  readonly app: TestApp;
  readonly tenant: Tenant;
  /** The API as `token` (or anonymously) on this app. */
  as(token?: string): ReturnType<typeof api>;
  /**
   * Resolves once the app and its tenant are up. node:test starts a file's top-level before() hooks
   * together, not one after another, so a file's own before() that uses `app` or `tenant` awaits this first.
   */
  readonly ready: Promise<void>;
}

export interface TenantHarnessOptions {
  /** Configuration that differs from the test default. */
  config?: Partial<Config>;
  app?: TestAppOptions;
  /** Whether to create the tenant (default true); false gives an empty app. */
  tenant?: boolean;
}

/**
 * Registers the file's before/after hooks and returns a handle whose `app` and `tenant` are set once
 * the first test runs: `const t = useTenantApp(); test('...', () => t.as(t.tenant.member.token).get(...))`.
 */
export function useTenantApp(options: TenantHarnessOptions = {}): TenantHarness {
  let app: TestApp | undefined;
  let tenant: Tenant | undefined;
  const started = Promise.withResolvers<void>();
  // A file whose app never starts must not also leave its own hooks waiting forever.
  started.promise.catch(() => {});
  before(async () => {
    try {
      app = await startTestApp(options.config, options.app);
      if (options.tenant !== false) tenant = await createTenant(app.url);
      started.resolve();
    } catch (error) {
      started.reject(error);
      throw error;
    }
  });
  after(async () => {
    await app?.close();
  });
  return {
    get app() {
      if (!app) throw new Error('the app starts in before(): use it inside a test or hook');
      return app;
    },
    get tenant() {
      if (!tenant)
        throw new Error(
          options.tenant === false
            ? 'this harness was made with tenant: false'
            : 'the tenant is created in before(): use it inside a test or hook',
        );
      return tenant;
    },
    as(token?: string) {
      return api(this.app.url, token);
    },
    ready: started.promise,
  };
}
