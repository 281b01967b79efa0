// Builds the admin console (console/src) into console/dist: one hashed, minified JS and CSS bundle,
// the HTML that loads them, and brotli and gzip copies of each, so the server never compresses at run time.
// Runs during npm ci (postinstall) and as `npm run build:console`.
import { build } from 'esbuild';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../console');
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, 'assets'), { recursive: true });

const result = await build({
  entryPoints: [join(root, 'src/main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: join(dist, 'assets'),
  entryNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.endsWith('.js'));
const style = outputs.find((name) => name.endsWith('.css'));
if (!script) throw new Error('build-console: esbuild produced no script');

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>orgplane console</title>
${style ? `<link rel="stylesheet" href="/assets/${style}">` : ''}
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The orgplane console needs JavaScript.</noscript></div>
</body>
</html>
`;
writeFileSync(join(dist, 'index.html'), html);

const files = [
  join(dist, 'index.html'),
  ...readdirSync(join(dist, 'assets')).map((name) => join(dist, 'assets', name)),
];
for (const file of files) {
  const body = readFileSync(file);
  writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
}
console.log(`console built: ${outputs.join(', ')}`);
