// What a SAMLResponse shaped to keep the XML parser busy costs the ACS: a real app and a real IdP
// (test/support/saml-idp.ts, samlify signing), a sign-in started, and the IdP's signed answer posted
// with something added outside the signed assertion: nothing (the control), 40,000 nested elements,
// 50,000 sibling elements, 4,001 attributes, a DOCTYPE. For each: the ACS's answer, how long the
// request took, and the longest the app's event loop was blocked meanwhile (the app runs in this
// process: a blocked loop is every other request of the process waiting).
//   node_modules/.bin/node bench/saml-depth/run.ts [rounds, default 3]
import { existsSync } from 'node:fs';
import { personOf, postToAcs, startSamlWorld } from '../../test/sso/saml-support.ts';
import { api } from '../../test/support/http.ts';

const rounds = Number(process.argv[2] ?? 3);
const shapeModule = new URL('../../src/modules/sso/saml-xml-shape.ts', import.meta.url);
const shapeCheck: ((xml: string) => string | undefined) | undefined = existsSync(shapeModule)
  ? (await import(shapeModule.href)).samlXmlShapeProblem
  : undefined;

const inExtensions = (payload: string) => (signed: string) =>
  signed.replace(
    '</saml:Issuer><samlp:Status>',
    `</saml:Issuer><samlp:Extensions>${payload}</samlp:Extensions><samlp:Status>`,
  );
const attributes = (count: number) => Array.from({ length: count }, (_, i) => `a${i}="v"`).join(' ');
const shapes: [string, (signed: string) => string][] = [
  ['control (as signed)', (signed) => signed],
  ['deep: 40,000 levels', inExtensions('<x>'.repeat(40_000) + '</x>'.repeat(40_000))],
  ['wide: 50,000 elements', inExtensions('<x/>'.repeat(50_000))],
  ['4,001 attributes', inExtensions(`<x ${attributes(2_001)}/><x ${attributes(2_000)}/>`)],
  [
    'DOCTYPE',
    (signed) => signed.replace('<samlp:Response', '<!DOCTYPE samlp:Response [<!ENTITY e "x">]><samlp:Response'),
  ],
];

/** The longest the event loop went without running a 5 ms timer, until stop() (a loop blocked to the end counts to the end). */
function watchEventLoop() {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(longest, performance.now() - last);
    },
  };
}

const world = await startSamlWorld({ logLevel: 'warn' });
const person = personOf(world.tenant.member);
/** The IdP's answer to a new sign-in, rewritten after signing; posted to the ACS unless `post` is false. */
async function signInAnswer(rewrite: (signed: string) => string, post = true) {
  const started = await api(world.app.url).post('/v1/auth/sso/start', {
    email: person.email,
    redirectUri: 'http://127.0.0.1:9/sso-done',
    codeChallenge: 'c'.repeat(43),
    codeChallengeMethod: 'S256',
  });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${started.text}`);
  world.idp.signInAs(person);
  world.idp.afterSigning(rewrite);
  const answer = await world.idp.answer(started.body.authorizationUrl);
  world.idp.reset();
  if (post) await postToAcs(answer.action, { SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState });
  return answer;
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `node ${process.version}, ${new Date().toISOString()}, ${rounds} rounds, ${process.env.ORGPLANE_TEST_BACKEND ?? 'pglite'}, shape check ${shapeCheck ? 'present' : 'absent'}`,
);
try {
  // Warm-up, not counted: the first sign-ins compile the code paths.
  for (let i = 0; i < 3; i++) await signInAnswer((signed) => signed);
  for (const [label, rewrite] of shapes) {
    const times: number[] = [];
    const blocked: number[] = [];
    let outcome = '';
    let decoded = '';
    for (let round = 0; round < rounds; round++) {
      const answer = await signInAnswer(rewrite, false);
      const loop = watchEventLoop();
      const began = performance.now();
      const posted = await postToAcs(answer.action, {
        SAMLResponse: answer.SAMLResponse,
        RelayState: answer.RelayState,
      });
      times.push(performance.now() - began);
      blocked.push(loop.stop());
      outcome = `${posted.status}${posted.location ? ' (signed in)' : ''}`;
      decoded = Buffer.from(answer.SAMLResponse, 'base64').toString('utf8');
    }
    // The shape check alone on the same text, where this code has it (main's before the fix does not).
    let scan = '';
    if (shapeCheck) {
      const scans: number[] = [];
      for (let i = 0; i < 21; i++) {
        const began = performance.now();
        shapeCheck(decoded);
        scans.push(performance.now() - began);
      }
      scan = `   shape check alone: median ${median(scans).toFixed(2)} ms`;
    }
    console.log(
      `${label.padEnd(24)} ${outcome.padEnd(16)} request ms: median ${median(times).toFixed(0).padStart(6)} [${times.map((t) => t.toFixed(0)).join(', ')}]   longest event-loop stall ms: median ${median(blocked).toFixed(0).padStart(6)} [${blocked.map((t) => t.toFixed(0)).join(', ')}]${scan}`,
    );
  }
} finally {
  await world.close();
}
