// The attacks on a SAML service provider, each against a real IdP signing real assertions: each is
// refused with a readable page, leaves no code, and is recorded as the connection's last error.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.ts';
import { api } from '../support/http.ts';
import { followRedirects, type CookieJar } from '../support/oidc-idp.ts';
import { generateSamlKey } from '../support/saml-idp.ts';
import { startAttacker, type Attacker } from './attacker-support.ts';
import { identityProviderUrl } from './oidc-support.ts';
import {
  appRedirectUri,
  lastError,
  personOf,
  pkcePair,
  postToAcs,
  samlSignIn,
  startInBrowser,
  startSamlWorld,
  type SamlWorld,
} from './saml-support.ts';

describe('SAML sign-in: forged, tampered and replayed answers are refused', () => {
  let world: SamlWorld;
  let attacker: Attacker;
  before(async () => {
    world = await startSamlWorld();
    attacker = await startAttacker(world.app, world.dns, world.tenant);
  });
  after(async () => {
    await attacker?.close();
    await world?.close();
  });

  /** Signs the member in with the IdP's next answer as tampered; asserts the refusal and returns the recorded error. */
  async function refused(label: string, person = personOf(world.tenant.member), status = 403) {
    try {
      const flow = await samlSignIn(world, world.tenant.member.email, person);
      assert.equal(flow.status, status, `${label}: ${flow.status} ${flow.location ?? flow.text.slice(0, 300)}`);
      assert.match(flow.contentType ?? '', /text\/html/, label);
      assert.match(flow.text, /Sign-in refused/, label);
      assert.equal(flow.location, undefined, label);
      const error = await lastError(world);
      assert.ok(error, `${label}: recorded`);
      return { flow, error: error! };
    } finally {
      world.idp.reset();
    }
  }

  it('the public SP metadata tells nothing of the organization: no domain, no name, no IdP, no certificate', async () => {
    const connection = (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
    const xml = await (await fetch(connection.spMetadataUrl)).text();
    for (const secret of [
      connection.domain,
      'Acme',
      world.tenant.orgId,
      world.idp.entityId,
      world.idp.key.certificate.split('\n')[1]!,
    ]) {
      assert.ok(!xml.includes(secret), secret);
    }
  });

  it('XML signature wrapping: a forged assertion beside or around the signed one is refused', async () => {
    const { owner } = world.tenant;
    const forge = (signed: string, place: 'extensions' | 'before') => {
      const original = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed)![0];
      const forged = original
        .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
        .replace(/ID="[^"]*"/, 'ID="_forged"')
        .replaceAll(world.tenant.member.email, owner.email);
      if (place === 'before') return signed.replace(original, forged + original);
      // The signed assertion moved into the Response's Extensions, the forged one where an assertion belongs.
      return signed
        .replace(original, forged)
        .replace(
          '</saml:Issuer><samlp:Status>',
          `</saml:Issuer><samlp:Extensions>${original}</samlp:Extensions><samlp:Status>`,
        );
    };
    for (const place of ['extensions', 'before'] as const) {
      world.idp.afterSigning((xml) => forge(xml, place));
      const { error } = await refused(`wrapping (${place})`);
      assert.equal(error.category, 'assertion_rejected', place);
    }
  });

  it('an unsigned assertion is refused', async () => {
    world.idp.unsigned();
    const { error } = await refused('unsigned');
    assert.equal(error.category, 'assertion_rejected');
    assert.match(error.message, /signature/i);
  });

  it('an assertion signed by another key (the right issuer, a certificate the connection does not trust) is refused', async () => {
    world.idp.useKey(await generateSamlKey());
    const { error } = await refused('another key');
    assert.equal(error.category, 'assertion_rejected');
    assert.match(error.message, /signature/i);
  });

  it('a comment-truncated NameID is read whole: member@example.test<!---->.evil.example is not member@example.test', async () => {
    const { member } = world.tenant;
    const attacker = `${member.email}.evil.example`;
    // The IdP signs its own user's name; the comment is added after signing, and canonicalization (which
    // drops comments) keeps the signature valid: a reader of the first text node would see the member.
    world.idp.afterSigning((xml) => xml.replace(`>${attacker}<`, `>${member.email}<!---->.evil.example<`));
    const { error } = await refused('comment', { nameId: attacker });
    assert.equal(error.category, 'email_outside_domain', error.message);
    const linked = await world.app.db.query('SELECT subject FROM sso_identities WHERE user_id = $1', [member.userId]);
    assert.deepEqual(linked.rows, []);
  });

  it('an expired assertion is refused; one within the clock skew (SSO_CLOCK_SKEW_SECONDS, 60 s) is accepted', async () => {
    const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
    world.idp.tamper(() => ({
      issueInstant: ago(600),
      notBefore: ago(600),
      authnInstant: ago(600),
      notOnOrAfter: ago(120),
    }));
    const { error } = await refused('expired');
    assert.equal(error.category, 'assertion_rejected');
    // node-saml finds no bearer confirmation still valid (its NotOnOrAfter passed) before it reads the Conditions.
    assert.match(error.message, /expired|no valid subject confirmation/i);
    world.idp.tamper(() => ({ notOnOrAfter: ago(20) }));
    try {
      const skewed = await samlSignIn(world, world.tenant.member.email, personOf(world.tenant.member));
      assert.equal(skewed.status, 303, skewed.text);
    } finally {
      world.idp.reset();
    }
    world.idp.tamper(() => ({ notBefore: new Date(Date.now() + 600_000).toISOString() }));
    assert.match((await refused('not yet valid')).error.message, /not yet valid/);
  });

  it('a wrong audience, recipient or destination is refused, and the message quotes nothing of the assertion', async () => {
    world.idp.tamper(() => ({ audience: 'https://other-sp.example/metadata' }));
    const audience = await refused('audience');
    assert.match(audience.error.message, /audience/);
    assert.ok(!audience.error.message.includes('other-sp.example'));
    assert.ok(!audience.flow.text.includes('other-sp.example'));
    world.idp.tamper(() => ({ recipient: 'https://other-sp.example/acs' }));
    assert.match((await refused('recipient')).error.message, /Recipient/);
    world.idp.tamper(() => ({ destination: 'https://other-sp.example/acs' }));
    assert.match((await refused('destination')).error.message, /Destination/);
  });

  it('an answer to a request orgplane did not make (unknown InResponseTo) is refused; so is an unsolicited one without RelayState', async () => {
    world.idp.tamper(() => ({ inResponseTo: '_never-requested', subjectInResponseTo: '_never-requested' }));
    assert.equal((await refused('unknown InResponseTo')).error.category, 'assertion_rejected');
    // The response's InResponseTo right, the signed assertion's answering another request.
    world.idp.tamper(() => ({ subjectInResponseTo: '_never-requested' }));
    assert.equal((await refused('assertion InResponseTo')).error.category, 'assertion_rejected');
    const flow = await samlSignIn(world, world.tenant.member.email, personOf(world.tenant.member));
    const unsolicited = await postToAcs(`${world.app.url}/v1/auth/sso/saml/acs`, {
      SAMLResponse: flow.answer.SAMLResponse,
    });
    assert.equal(unsolicited.status, 400);
    assert.match(unsolicited.contentType ?? '', /text\/html/);
  });

  it('answers shaped to keep the XML parser busy are refused before anything parses them: 40,000 levels deep, 50,000 elements (the assertion still validly signed), 4,001 attributes, a DOCTYPE', async () => {
    // Outside the signed assertion, where a man in the middle (or the person's own browser) can add anything.
    const inExtensions = (payload: string) => (signed: string) =>
      signed.replace(
        '</saml:Issuer><samlp:Status>',
        `</saml:Issuer><samlp:Extensions>${payload}</samlp:Extensions><samlp:Status>`,
      );
    const attributes = (count: number) => Array.from({ length: count }, (_, i) => `a${i}="v"`).join(' ');
    const shapes: [string, (signed: string) => string, RegExp][] = [
      // As deep as fits under the ACS's 512 KiB form limit, base64 and percent-encoded.
      ['deep', inExtensions('<x>'.repeat(40_000) + '</x>'.repeat(40_000)), /nested more than 64 elements deep/],
      ['wide', inExtensions('<x/>'.repeat(50_000)), /more than 2,000 elements/],
      ['attributes', inExtensions(`<x ${attributes(2_001)}/><x ${attributes(2_000)}/>`), /more than 4,000 attributes/],
      [
        'doctype',
        (signed) => signed.replace('<samlp:Response', '<!DOCTYPE samlp:Response [<!ENTITY e "x">]><samlp:Response'),
        /DOCTYPE/,
      ],
    ];
    const outcomes: string[] = [];
    for (const [label, rewrite, message] of shapes) {
      world.idp.afterSigning(rewrite);
      try {
        const flow = await samlSignIn(world, world.tenant.member.email, personOf(world.tenant.member));
        const error = await lastError(world);
        const said =
          message.test(flow.text) && message.test(error?.message ?? '')
            ? 'says why'
            : `says ${JSON.stringify(error?.message)}`;
        outcomes.push(`${label}: ${flow.status} ${flow.location ? 'signed in' : `page, ${error?.category}, ${said}`}`);
      } finally {
        world.idp.reset();
      }
    }
    assert.deepEqual(
      outcomes,
      shapes.map(([label]) => `${label}: 400 page, assertion_rejected, says why`),
    );
    // The limits leave room for what an IdP sends: the same answer, unchanged, signs in.
    const flow = await samlSignIn(world, world.tenant.member.email, personOf(world.tenant.member));
    assert.equal(flow.status, 303, flow.text);
  });

  it("another organization's admin cannot have a SAML victim's code sent through orgplane's OIDC callback to her identity provider", async () => {
    const victim = world.tenant.member;
    // Her own OIDC sign-in, for her own domain: a state whose callback exchanges codes at her provider.
    const trap = await attacker.ownCallback();
    const pkce = pkcePair();
    const started = await api(world.app.url).post('/v1/auth/sso/start', {
      email: victim.email,
      redirectUri: trap,
      codeChallenge: pkce.challenge,
      codeChallengeMethod: 'S256',
    });
    let session: { userId: string; organizationId: string } | undefined;
    if (started.status === 200) {
      // She opens the authorization URL herself and sends the victim the genuine one of the victim's IdP;
      // the victim signs in, and her browser posts the IdP's answer to the ACS and follows orgplane.
      const genuine = await identityProviderUrl(world.app, started.body.authorizationUrl, attacker.jar);
      world.idp.signInAs(personOf(victim));
      const answer = await world.idp.answer(genuine);
      const victimsBrowser: CookieJar = new Map();
      const seen = attacker.idp.receivedCodes.length;
      const posted = await postToAcs(
        answer.action,
        { SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState },
        victimsBrowser,
      );
      if (posted.location) await followRedirects(posted.location, 'about:nowhere', victimsBrowser);
      for (const code of attacker.idp.receivedCodes.slice(seen)) {
        const exchanged = await api(world.app.url).post('/v1/auth/sso/token', { code, codeVerifier: pkce.verifier });
        if (exchanged.status === 200)
          session = { userId: exchanged.body.user.id, organizationId: exchanged.body.organizationId };
      }
    }
    assert.equal(session, undefined, 'the attacker signed in as the victim');
    assert.equal(started.status, 400, started.text);
    assert.deepEqual(started.body.details[0].path, ['redirectUri']);
  });

  it("the IdP's answer posted by another browser is refused (403 browser_mismatch page) before the assertion is used; the starter's browser posts it and signs in", async () => {
    const { member } = world.tenant;
    const pkce = pkcePair();
    const started = await api(world.app.url).post('/v1/auth/sso/start', {
      email: member.email,
      redirectUri: appRedirectUri,
      codeChallenge: pkce.challenge,
      codeChallengeMethod: 'S256',
    });
    assert.equal(started.status, 200, started.text);
    const starter: CookieJar = new Map();
    world.idp.signInAs(personOf(member));
    const answer = await world.idp.answer(await identityProviderUrl(world.app, started.body.authorizationUrl, starter));
    const fields = { SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState };

    const elsewhere = await postToAcs(answer.action, fields);
    assert.equal(elsewhere.status, 403, 'a browser without the binding cookie is refused');
    assert.match(elsewhere.contentType ?? '', /text\/html/);
    assert.match(elsewhere.text, /started in another browser/);
    assert.equal(
      (await postToAcs(answer.action, fields, new Map([['orgplane_sso', 'A'.repeat(43)]]))).status,
      403,
      'nor does a made-up cookie pass',
    );
    const { rows } = await world.app.db.query(
      'SELECT count(*)::int AS n FROM sso_saml_assertions WHERE organization_id = $1',
      [world.tenant.orgId],
    );
    const recordedBefore = rows[0].n;
    assert.equal((await lastError(world))?.category, 'browser_mismatch');

    const own = await postToAcs(answer.action, fields, starter);
    assert.equal(own.status, 303, own.text);
    const after = await world.app.db.query(
      'SELECT count(*)::int AS n FROM sso_saml_assertions WHERE organization_id = $1',
      [world.tenant.orgId],
    );
    assert.equal(after.rows[0].n, recordedBefore + 1, 'the assertion was first used by its own browser');
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: own.code,
      codeVerifier: pkce.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.id, member.userId);
  });

  describe('replays, across two app instances sharing one database', () => {
    let second: TestApp;
    before(async () => {
      // Another process behind the same PUBLIC_URL (a load balancer's second instance).
      second = await startTestApp(
        {
          dnsServers: world.app.config.dnsServers,
          allowedPrivateNetworks: ['127.0.0.1/32'],
          publicUrl: world.app.config.publicUrl,
        },
        { shareDatabaseWith: world.app },
      );
    });
    after(async () => {
      await second?.close();
    });

    it('an accepted answer posted again, to the same instance or the other, is refused', async () => {
      const { member } = world.tenant;
      const flow = await samlSignIn(world, member.email, personOf(member));
      assert.equal(flow.status, 303, flow.text);
      const fields = { SAMLResponse: flow.answer.SAMLResponse, RelayState: flow.answer.RelayState };
      for (const base of [world.app.url, second.url]) {
        const replay = await postToAcs(`${base}/v1/auth/sso/saml/acs`, fields);
        assert.equal(replay.status, 400, base);
        assert.equal(replay.location, undefined);
        assert.match(replay.text, /expired or was already used/);
      }
    });

    it('the same answer posted to both instances at once signs in once', async () => {
      const { member } = world.tenant;
      // A fresh answer, posted by nobody yet.
      const browser = await startInBrowser(world, member.email);
      world.idp.signInAs(personOf(member));
      const answer = await world.idp.answer(browser.idpUrl);
      const fields = { SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState };
      const results = await Promise.all(
        [world.app.url, second.url, world.app.url, second.url].map((base) =>
          postToAcs(`${base}/v1/auth/sso/saml/acs`, fields, browser.jar),
        ),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [303, 400, 400, 400]);
    });

    it('an assertion id seen before is refused even in an answer to a new request, by the other instance', async () => {
      const { member } = world.tenant;
      world.idp.tamper(() => ({ assertionId: '_reused-assertion-id' }));
      try {
        const first = await samlSignIn(world, member.email, personOf(member));
        assert.equal(first.status, 303, first.text);
        const again = await samlSignIn(world, member.email, personOf(member), { acsBase: second.url });
        assert.equal(again.status, 403, again.text);
        assert.match(again.text, /used before/);
        assert.equal((await lastError(world))?.category, 'assertion_replayed');
      } finally {
        world.idp.reset();
      }
    });
  });
});
