// GET /v1/bootstrap: what the console of a new instance asks before anyone signs in, to offer the
// first-run setup. It must follow POST /v1/bootstrap exactly (true while that would succeed) and say
// nothing else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../support/app.ts';
import { api } from '../support/http.ts';
import { useTenantApp } from '../support/harness.ts';

const body = {
  email: 'first@example.test',
  password: 'correct horse battery',
  name: 'First',
  organizationName: 'Acme',
};

describe('GET /v1/bootstrap', () => {
  const harness = useTenantApp({ tenant: false });

  it('is true on a new instance, false once bootstrapped; a second bootstrap is refused', async () => {
    const anonymous = api(harness.app.url);
    const before = await anonymous.get('/v1/bootstrap');
    assert.equal(before.status, 200, before.text);
    assert.deepEqual(before.body, { needed: true });

    const booted = await anonymous.post('/v1/bootstrap', body);
    assert.equal(booted.status, 201, booted.text);

    const after = await anonymous.get('/v1/bootstrap');
    assert.equal(after.status, 200, after.text);
    assert.deepEqual(after.body, { needed: false });
    const again = await anonymous.post('/v1/bootstrap', { ...body, email: 'second@example.test' });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.body.error, 'already_bootstrapped');
    assert.deepEqual((await anonymous.get('/v1/bootstrap')).body, { needed: false });
  });

  it('answers the same to anyone and ignores credentials, even garbage ones', async () => {
    for (const token of [undefined, 'garbage', 'ops_not-a-real-token']) {
      const answer = await api(harness.app.url, token).get('/v1/bootstrap');
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body, { needed: false }, 'only `needed`, nothing about the instance');
    }
  });

  it('an instance with an organization made by sign-up and POST /v1/orgs needs no bootstrap either', async () => {
    // The rule is "no organization", as POST /v1/bootstrap's: not "no instance administrator".
    const fresh = await startTestApp();
    try {
      const anonymous = api(fresh.url);
      assert.deepEqual((await anonymous.get('/v1/bootstrap')).body, { needed: true });
      const person = await anonymous.post('/v1/auth/sign-up', {
        email: 'someone@example.test',
        password: 'correct horse battery',
        name: 'Someone',
      });
      assert.equal(person.status, 201, person.text);
      assert.deepEqual(
        (await anonymous.get('/v1/bootstrap')).body,
        { needed: true },
        'an account alone changes nothing',
      );
      const org = await api(fresh.url, person.body.sessionToken).post('/v1/orgs', { name: 'Mine' });
      assert.equal(org.status, 201, org.text);
      assert.deepEqual((await anonymous.get('/v1/bootstrap')).body, { needed: false });
      assert.equal((await anonymous.post('/v1/bootstrap', body)).status, 409);
    } finally {
      await fresh.close();
    }
  });
});
