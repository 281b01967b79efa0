// The shape of a SAMLResponse, judged from its text before any XML parser sees it. The ACS parses
// what anyone posts with a valid RelayState, and the parsers (xmldom, then the signature's and
// node-saml's walks over the tree) cost far more than linear in the nesting and the number of
// elements: an answer 40,000 elements deep, or with 50,000 elements beside the signed assertion, held
// the event loop for seconds to minutes (bench/saml-depth). A real IdP's answer is a few dozen elements,
// under a dozen deep; these limits leave it a wide margin. One pass over the text, no allocation per
// element.

/** Deepest nesting of elements accepted (an answer with an encrypted assertion is about 12 deep). */
export const samlMaxDepth = 64;
/** Most elements accepted (an attribute value is one: room for about a thousand group names). */
export const samlMaxElements = 2_000;
/** Most attributes accepted, namespace declarations included. */
export const samlMaxAttributes = 4_000;

/** Why the document is refused, for the person and the connection's last error; undefined when its shape is acceptable. */
export function samlXmlShapeProblem(xml: string): string | undefined {
  let depth = 0;
  let elements = 0;
  let attributes = 0;
  let at = 0;
  while (true) {
    const open = xml.indexOf('<', at);
    if (open < 0) return undefined;
    const next = xml.charCodeAt(open + 1);
    if (next === 0x3f /* ? */) {
      // The XML declaration or a processing instruction: no elements inside.
      at = skipPast(xml, '?>', open + 2);
    } else if (next === 0x21 /* ! */) {
      if (xml.startsWith('<!--', open)) at = skipPast(xml, '-->', open + 4);
      else if (xml.startsWith('<![CDATA[', open)) at = skipPast(xml, ']]>', open + 9);
      // A DOCTYPE declares entities (expansion, external references) and nothing a SAML answer needs.
      else return "The identity provider's answer has a DOCTYPE (a declaration), which a SAML response never has.";
    } else if (next === 0x2f /* / */) {
      depth--;
      at = skipPast(xml, '>', open + 2);
    } else {
      elements++;
      depth++;
      if (elements > samlMaxElements)
        return `The identity provider's answer has more than ${samlMaxElements.toLocaleString('en-US')} elements.`;
      if (depth > samlMaxDepth)
        return `The identity provider's answer is nested more than ${samlMaxDepth} elements deep.`;
      // The start tag: its attributes (each has one `=` outside quotes), up to its `>` or `/>`.
      let quote = 0;
      let end = open + 1;
      for (; end < xml.length; end++) {
        const char = xml.charCodeAt(end);
        if (quote !== 0) {
          if (char === quote) quote = 0;
        } else if (char === 0x22 /* " */ || char === 0x27 /* ' */) {
          quote = char;
        } else if (char === 0x3d /* = */) {
          attributes++;
        } else if (char === 0x3e /* > */) {
          break;
        }
      }
      if (attributes > samlMaxAttributes)
        return `The identity provider's answer has more than ${samlMaxAttributes.toLocaleString('en-US')} attributes.`;
      if (xml.charCodeAt(end - 1) === 0x2f /* / */) depth--;
      at = end + 1;
    }
  }
}

/** Where the text continues after `terminator` (the end of the text when it never comes: the parser refuses that). */
function skipPast(xml: string, terminator: string, from: number): number {
  const found = xml.indexOf(terminator, from);
  return found < 0 ? xml.length : found + terminator.length;
}
