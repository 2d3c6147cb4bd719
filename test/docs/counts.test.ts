// Every count the README and the benchmarks page cite is checked against the committed record it comes from:
// the scenario files, the CLI's own command list, the fidelity records, the benchmarks' sources, the model's
// grid, package.json's engines. Each source is parsed here, never copied: edit a cited number, or the record
// under it, and this fails. The relative links of README.md and docs/*.md are checked too, anchors included.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FULL_GRID, SMALL_GRID, gridScenarios } from '../../dev/check-model/grid.ts';
import { compareSides } from '../../dev/fidelity/compare.ts';
import { runCli } from '../support/cli.ts';
import { repoRoot } from '../support/processes.ts';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const readme = read('README.md');
const benchmarks = read('docs/benchmarks.md');
const architecture = read('docs/architecture.md');
const number = (text: string) => Number(text.replaceAll(',', ''));

/** The scenario names of a scenario file, from the YAML itself. */
const scenarioNames = (path: string): string[] =>
  (parse(read(path)) as { scenarios: { name: string }[] }).scenarios.map((s) => s.name);

/** `const NAME = Number(process.env.X ?? 10_000)` or `const NAME = 50;` in a benchmark's source: its value. */
function constantIn(path: string, name: string): number {
  const m = read(path).match(new RegExp(`const ${name} = (?:Number\\(process\\.env\\.\\w+ \\?\\? )?([\\d_]+)`));
  expect(m, `${path} declares ${name}`).not.toBeNull();
  return Number(m![1]!.replaceAll('_', ''));
}

/** One cited figure found in a page, with the text around it for the failure message. */
function cited(text: string, pattern: RegExp): RegExpMatchArray[] {
  const all = [...text.matchAll(pattern)];
  expect(all.length, `a citation matching ${pattern}`).toBeGreaterThan(0);
  return all;
}

describe('the counts the README cites', () => {
  it('the scenarios of a file: as many as the file holds', () => {
    for (const m of cited(readme, /\b(\d+) scenarios of `(manifests\/[\w-]+\.yaml)`/g))
      expect(number(m[1]!), m[0]).toBe(scenarioNames(m[2]!).length);
  });

  it("the command table: the CLI's own commands, each once", async () => {
    const help = await runCli(['--help']);
    expect(help.code, help.stderr).toBe(0);
    const fromCli = [...help.stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
    expect(fromCli.length).toBeGreaterThan(0);
    const section = readme.split(/^## The commands$/m)[1]!.split(/^## /m)[0]!;
    const fromReadme = [...section.matchAll(/^\| `([a-z]+)` \|/gm)].map((m) => m[1]!);
    expect(fromReadme.sort()).toEqual(fromCli.sort());
  }, 120_000);

  it('the fidelity record of each minor: as many scenarios agree as the recorded sides give', () => {
    const minors = readdirSync(join(repoRoot, 'reports/fidelity')).filter((d) => /^v1\.\d+$/.test(d));
    expect(minors.length).toBeGreaterThan(0);
    const citations = cited(readme, /\b(\d+) of (\d+) on 1\.(\d+)\b/g);
    for (const m of citations) {
      const dir = `reports/fidelity/v1.${m[3]}`;
      const side = (name: string) => JSON.parse(read(`${dir}/${name}.json`));
      const compared = compareSides(side('sim'), side('node'));
      const agree = compared.filter((c) => c.disagreements.length === 0).length;
      expect([number(m[1]!), number(m[2]!)], `${m[0]} against ${dir}/{sim,node}.json`).toEqual([
        agree,
        compared.length,
      ]);
      // The record's own report says the same.
      // (a record with the edge scenarios gives the pod scenarios' count beside the whole matrix's).
      const report = read(`${dir}/fidelity.md`);
      expect(
        report.includes(`**${agree} of ${compared.length} scenarios agree.**`) ||
          report.includes(`(the pod scenarios ${agree} of ${compared.length},`),
        `${dir}/fidelity.md says ${agree} of ${compared.length}`,
      ).toBe(true);
    }
    // Every recorded minor is cited: a new record is news the README must carry.
    expect(citations.map((m) => `v1.${m[3]}`).sort()).toEqual(minors.sort());
  });

  it("the report excerpt: one row per scenario of the file it says it ran, in the file's order", () => {
    const [, file, excerpt] = readme.match(/--scenarios (manifests\/[\w-]+\.yaml)`\):\n\n```text\n([\s\S]*?)```/)!;
    const rows = excerpt!
      .split('\n')
      .slice(1)
      .map((line) => line.match(/^([a-z0-9-]+) {2,}.*(?:✅|❌|⚠️)/)?.[1])
      .filter(Boolean);
    expect(rows).toEqual(scenarioNames(file!));
  });

  it("the Node.js lines: package.json's engines, the floor apart", () => {
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const majors = [...engines.matchAll(/\^(\d+)\.(\d+)/g)].map((m) => ({ major: m[1]!, minor: m[2]! }));
    const [, lines, floor] = readme.match(
      /^Node\.js ([\d, or]+) \(`engines` in `package\.json` also admits ([\d.]+)\+/m,
    )!;
    const supported = lines!.split(/, | or /);
    expect(majors.map((m) => m.major).sort()).toEqual([...supported, floor!.split('.')[0]!].sort());
    expect(majors).toContainEqual({ major: floor!.split('.')[0], minor: floor!.split('.')[1] });
  });
});

describe('the counts the benchmarks page cites: each benchmark as its source runs it', () => {
  it('bench:server: the requests in flight', () => {
    const [m] = cited(benchmarks, /the lab server alone: ([\d,]+) in-flight/g);
    expect(number(m![1]!)).toBe(constantIn('bench/server.ts', 'REQUESTS'));
  });

  it('bench:grade: the observation files by default', () => {
    for (const m of cited(benchmarks, /regrading ([\d,]+) observation files/g))
      expect(number(m[1]!)).toBe(constantIn('bench/grade.ts', 'FILES'));
  });

  it('bench:sim: the pods at once', () => {
    for (const m of cited(benchmarks, /then (\d+) pods at once/g))
      expect(number(m[1]!)).toBe(constantIn('bench/sim.ts', 'PODS'));
  });

  it('bench:class: the submissions, each with one observation per scenario of the default matrix', () => {
    const [m] = cited(benchmarks, /\| ([\d,]+) packed submissions × (\d+) observations/g);
    expect(number(m![1]!)).toBe(constantIn('bench/class.ts', 'SUBMISSIONS'));
    expect(read('bench/class.ts')).toContain('await loadScenarios();');
    expect(number(m![2]!)).toBe(scenarioNames('manifests/scenarios.yaml').length);
  });

  it("check:model's grid (docs/architecture.md): the combinations of the full grid and of npm test's", () => {
    const [m] = cited(
      architecture,
      /(\d+) combinations, \d+ at a time\)[\s\S]*?`-- --small` runs the (\d+) that `npm test` runs/g,
    );
    expect(number(m![1]!)).toBe(gridScenarios(FULL_GRID).length);
    expect(number(m![2]!)).toBe(gridScenarios(SMALL_GRID).length);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replaceAll(' ', '-');

describe('the links of the README and the guides', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(repoRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];

  it('each relative link names a file that exists, and a heading of it when it names one', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = read(page).replace(/^```[\s\S]*?^```/gm, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#');
        const file = path ? relative(repoRoot, join(repoRoot, dirname(page), path)) : page;
        checked++;
        if (!existsSync(join(repoRoot, file))) broken.push(`${page}: ${target} (no ${file})`);
        else if (anchor && file.endsWith('.md')) {
          const headings = [...read(file).matchAll(/^#+ (.+)$/gm)].map((h) => slug(h[1]!));
          if (!headings.includes(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});

describe('the npm scripts the guides name', () => {
  it('each `npm run NAME` in README.md and docs/*.md is a script, and each script runs files that exist', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const pages = [
      'README.md',
      ...readdirSync(join(repoRoot, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const named = new Set(
      pages.flatMap((page) =>
        [...read(page).matchAll(/npm run (?:-s )?([a-z][a-z0-9:-]*[a-z0-9])(?![\w:*])/g)].map((m) => m[1]!),
      ),
    );
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((name) => !(name in scripts))).toEqual([]);
    const files = Object.values(scripts).flatMap((line) =>
      [...line.matchAll(/\b(?:tsx|node) ([\w./-]+\.[jt]s)\b/g)].map((m) => m[1]!),
    );
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((file) => !existsSync(join(repoRoot, file)))).toEqual([]);
  });
});
