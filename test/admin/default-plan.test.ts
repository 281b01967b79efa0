// DEFAULT_PLAN: the plan of every new organization, made through the API or the bootstrap.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.ts';
import { signUp } from '../support/fixtures.ts';
import { api } from '../support/http.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ defaultPlan: 'team' });
});
after(() => app?.close());

test('with DEFAULT_PLAN=team, the bootstrap organization and a new one are on the team plan', async () => {
  const root = await api(app.url).post('/v1/bootstrap', {
    email: 'root@example.test',
    password: 'long enough pw',
    name: 'Root',
    organizationName: 'First',
  });
  assert.equal(root.status, 201, root.text);
  assert.equal((await api(app.url, root.body.sessionToken).get('/v1/org')).body.organization.plan, 'team');
  const person = await signUp(app.url, 'planned');
  const created = await api(app.url, person.token).post('/v1/orgs', { name: 'Second' });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.organization.plan, 'team');
});

test('without it, free', async () => {
  const plain = await startTestApp();
  try {
    const person = await signUp(plain.url, 'plain');
    const created = await api(plain.url, person.token).post('/v1/orgs', { name: 'Plain' });
    assert.equal(created.body.organization.plan, 'free');
  } finally {
    await plain.close();
  }
});
