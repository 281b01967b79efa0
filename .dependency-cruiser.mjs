// The module boundaries of src/ (and of the console and shared/ against it), checked on every `npm test` and by `npm run lint:boundaries`.
// Each rule's `comment` is printed with its violations, so it says why the rule exists.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'module-through-its-index',
      severity: 'error',
      comment:
        "A domain module reaches another only through that module's index.ts (its contract: the types and " +
        "functions it exports). Importing another module's store.ts, routes.ts or service internals couples " +
        'the two to details the owner must stay free to change.',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/[^/]+/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'foundation-imports-no-module',
      severity: 'error',
      comment:
        'http/, db/, platform/ and config.ts (with config-schema.ts, config-variables.ts) are the foundation every module builds on: they import nothing ' +
        'from modules/, so a module can be added, changed or removed without touching them, and no cycle ' +
        'runs through them.',
      from: { path: ['^src/http/', '^src/db/', '^src/platform/', '^src/config\\.ts$', '^src/config-[a-z]+\\.ts$'] },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-circular-between-modules',
      severity: 'error',
      comment:
        'Modules depend on each other in one direction only: a cycle between two modules means neither can ' +
        'be understood, tested or started without the other, and their registration order stops being a ' +
        'choice. (Within one module, files may refer to each other.)',
      scope: 'folder',
      from: { path: '^src/modules/[^/]+$' },
      to: { path: '^src/modules/[^/]+$', circular: true },
    },
    {
      name: 'sub-module-through-its-index',
      severity: 'error',
      comment:
        'A folder inside a module is a sub-module (mcp-connections/oauth/, mcp-connections/probe/): the rest ' +
        'of its module, and its sibling sub-modules, reach it only through its index.ts, as modules reach ' +
        'each other. Its other files are its own to change.',
      from: { path: '^src/modules/([^/]+)/([^/]+)' },
      to: {
        path: '^src/modules/$1/[^/]+/',
        pathNot: ['^src/modules/$1/$2/', '^src/modules/$1/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'sub-module-through-its-index-from-outside',
      severity: 'error',
      comment:
        'Code outside src/modules/ (the composition root: app.ts, cli.ts) reaches a sub-module only through ' +
        'its index.ts too.',
      from: { pathNot: '^src/modules/' },
      to: { path: '^src/modules/[^/]+/[^/]+/', pathNot: '^src/modules/[^/]+/[^/]+/index\\.ts$' },
    },
    {
      name: 'sub-module-uses-parent-contracts-only',
      severity: 'error',
      comment:
        "A sub-module imports nothing of its parent module but the parent's contracts.ts (the types it shares " +
        "with them) and error-codes.ts (the module's one error catalog, whose codes are the sub-module's too); " +
        'what else it needs of the parent is handed to it when it is built. Importing the ' +
        "parent's store, service or index.ts would tie it to details and close an import circle.",
      from: { path: '^src/modules/([^/]+)/[^/]+/' },
      to: { path: '^src/modules/$1/[^/]+$', pathNot: '^src/modules/$1/(contracts|error-codes)\\.ts$' },
    },
    {
      name: 'foundation-imports-downward',
      severity: 'error',
      comment:
        'The foundation has layers: db/ at the bottom, platform/ on it, http/ on both. A layer imports ' +
        'nothing from one above it (platform/caller.ts holds the Caller type that both the write context ' +
        'and http/ name), so each can be read and tested without those built on it.',
      from: { path: ['^src/db/', '^src/platform/'] },
      to: { path: '^src/http/' },
    },
    {
      name: 'db-imports-no-platform',
      severity: 'error',
      comment:
        'db/ is the bottom layer of the foundation: it imports nothing from platform/ (see foundation-imports-downward).',
      from: { path: '^src/db/' },
      to: { path: '^src/platform/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import circle between files anywhere in src/, console/src/ or shared/ (a file importing one ' +
        'that imports it back, directly or around a loop), type-only imports included: a circle means ' +
        'neither file can be read, ' +
        "changed or loaded without the other. A module's index.ts and its service both import its " +
        'contracts.ts instead of each other.',
      from: { path: '^(src|console/src|shared)/' },
      to: { circular: true },
    },
    {
      name: 'no-circular-files',
      severity: 'error',
      comment:
        'A cycle of imports between files in different modules is a cycle between those modules, even when ' +
        'each step goes through an index.ts.',
      from: { path: '^src/modules/([^/]+)/' },
      to: { circular: true, viaSomeNot: '^src/modules/$1/' },
    },
    {
      name: 'console-and-shared-apart-from-the-server',
      severity: 'error',
      comment:
        'The console runs in the browser: whatever it imports from src/ is bundled and shipped with it (server ' +
        'code, and the secrets or Node APIs it touches). What both sides need lives in shared/, which is pure ' +
        'and so imports neither src/ nor console/.',
      from: { path: ['^console/src/', '^shared/'] },
      to: { path: '^src/' },
    },
    {
      name: 'shared-imports-no-console',
      severity: 'error',
      comment: 'shared/ is imported by the server too: a console import there would pull browser code into it.',
      from: { path: '^shared/' },
      to: { path: '^console/' },
    },
  ],
  options: {
    includeOnly: '^(src|console/src|shared)/',
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are dependencies too: a module that names another's internal types is coupled to
    // them, and a circle of type-only imports still ties its files together (no-circular counts them).
    tsPreCompilationDeps: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
