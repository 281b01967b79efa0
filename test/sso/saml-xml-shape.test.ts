// The SAML response's shape limits, at their edges: what is exactly at a limit passes, one more is
// refused; comments, CDATA, processing instructions and quoted values are read as what they are.
// (At the ACS, with a real IdP's signed answers: test/sso/saml-sign-in.security.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  samlMaxAttributes,
  samlMaxDepth,
  samlMaxElements,
  samlXmlShapeProblem,
} from '../../src/modules/sso/saml-xml-shape.ts';

const nested = (depth: number) => '<x>'.repeat(depth) + '</x>'.repeat(depth);
const siblings = (count: number) => `<r>${'<x/>'.repeat(count - 1)}</r>`;
const withAttributes = (count: number) => `<r>${Array.from({ length: count }, (_, i) => `<x a="${i}"/>`).join('')}</r>`;

test('at each limit the document passes; one more element, level or attribute is refused, and the reason names the limit', () => {
  assert.equal(samlXmlShapeProblem(nested(samlMaxDepth)), undefined);
  assert.match(samlXmlShapeProblem(nested(samlMaxDepth + 1)) ?? '', /nested more than 64 elements deep/);
  assert.equal(samlXmlShapeProblem(siblings(samlMaxElements)), undefined);
  assert.match(samlXmlShapeProblem(siblings(samlMaxElements + 1)) ?? '', /more than 2,000 elements/);
  const oneElement = (count: number) => `<x ${Array.from({ length: count }, (_, i) => `a${i}="v"`).join(' ')}/>`;
  assert.equal(samlXmlShapeProblem(oneElement(samlMaxAttributes)), undefined);
  assert.match(samlXmlShapeProblem(oneElement(samlMaxAttributes + 1)) ?? '', /more than 4,000 attributes/);
  // Counted across the document, not per element.
  assert.equal(samlXmlShapeProblem(withAttributes(1_999)), undefined);
  assert.match(
    samlXmlShapeProblem(withAttributes(1_999).replaceAll('<x a=', '<x b="1" c="2" a=')) ?? '',
    /more than 4,000 attributes/,
  );
});

test('self-closing and closed siblings do not add depth; a deep answer split into many shallow branches passes', () => {
  const branches = Array.from({ length: 30 }, () => nested(samlMaxDepth - 1)).join('');
  assert.equal(samlXmlShapeProblem(`<r>${branches}</r>`), undefined);
  assert.equal(samlXmlShapeProblem(`<r>${'<x></x><y/>'.repeat(500)}</r>`), undefined);
});

test('comments, CDATA, processing instructions and quoted values hold no elements or attributes', () => {
  const hidden = '<x a="1">'.repeat(100);
  for (const wrapped of [`<!--${hidden}-->`, `<![CDATA[${hidden}]]>`, `<?pi ${hidden}?>`]) {
    assert.equal(samlXmlShapeProblem(`<?xml version="1.0"?><r>${wrapped}</r>`), undefined, wrapped.slice(0, 12));
  }
  // A `>` or `=` inside a quoted value ends nothing and counts nothing.
  assert.equal(samlXmlShapeProblem(`<r>${`<x v='a>b=c' w="=>=>"/>`.repeat(1_999)}</r>`), undefined);
});

test('a DOCTYPE (or any other declaration) is refused, before or inside the root; a comment that mentions one is not', () => {
  assert.match(samlXmlShapeProblem('<!DOCTYPE r [<!ENTITY e "x">]><r>&e;</r>') ?? '', /DOCTYPE/);
  assert.match(
    samlXmlShapeProblem('<?xml version="1.0"?>\n<!DOCTYPE r SYSTEM "http://127.0.0.1/x.dtd"><r/>') ?? '',
    /DOCTYPE/,
  );
  assert.match(samlXmlShapeProblem('<r><!ENTITY e "x"></r>') ?? '', /DOCTYPE/);
  assert.equal(samlXmlShapeProblem('<r><!-- <!DOCTYPE r> --></r>'), undefined);
});

test('text that is not XML, or is cut short, has no shape problem: the parser refuses it as it always did', () => {
  for (const text of ['', 'not xml', '<r', '<r a="unterminated', '<!--', '<![CDATA[', '</r></r></r>']) {
    assert.equal(samlXmlShapeProblem(text), undefined, JSON.stringify(text));
  }
});
