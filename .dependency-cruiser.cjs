// The wiring runs one way (docs: ../shared/ARCHITECTURE.md, "Data flow" and "Layout"): `npm test` and `npm run lint`
// fail on an arrow that runs back. Imports are read as TypeScript writes them (`./x.ts`, type-only ones too) and
// include dynamic `import()`, the way the CLI loads each command.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Files that import each other, directly or round a loop: the wiring runs one way, so there are none.',
      severity: 'error',
      from: { path: '^(lib|harness|cluster|server|dev|bin)/' },
      to: { circular: true },
    },
    {
      name: 'sim-not-harness',
      comment: 'The simulator knows nothing of the harness: it gets parsed values and an IO (lib/command.ts).',
      severity: 'error',
      from: { path: '^cluster/sim/' },
      to: { path: '^harness/' },
    },
    {
      name: 'harness-not-cluster',
      comment: 'The harness knows clusters only through a kubeconfig; harness/cli/main.ts has the one door, below.',
      severity: 'error',
      from: { path: '^harness/', pathNot: '^harness/cli/main\\.ts$' },
      to: { path: '^cluster/' },
    },
    {
      name: 'one-door-to-the-sim',
      comment: "The CLI's one door to the simulator is cluster/sim/index.ts, loaded only for --sim and `termlab sim`.",
      severity: 'error',
      from: { path: '^harness/cli/main\\.ts$' },
      to: { path: '^cluster/', pathNot: '^cluster/sim/index\\.ts$' },
    },
    {
      name: 'features-not-cli',
      comment: 'The CLI composes the features; no feature imports it (its flag table lives in harness/X/flags.ts).',
      severity: 'error',
      from: { path: '^harness/', pathNot: '^harness/cli/' },
      to: { path: '^harness/cli/' },
    },
    {
      name: 'report-not-grade-internals',
      comment: "The reports render grades: they know grade's result types (harness/grade/types.ts) and nothing else of it.",
      severity: 'error',
      from: { path: '^harness/report/' },
      to: { path: '^harness/grade/', pathNot: '^harness/grade/types\\.ts$' },
    },
    {
      name: 'grade-not-kube-client',
      comment: 'The grader reads observations and nothing else: never the Kubernetes client.',
      severity: 'error',
      from: { path: '^harness/grade/' },
      to: { path: '@kubernetes/client-node' },
    },
    {
      name: 'lib-only-lib',
      comment: 'lib/ is below everything of the project: it imports only lib/ (and packages, and Node).',
      severity: 'error',
      from: { path: '^lib/' },
      to: { dependencyTypes: ['local'], pathNot: '^lib/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that resolves to nothing would hide an arrow from every rule above.',
      severity: 'error',
      from: { path: '^(lib|harness|cluster|server|dev|bin)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
