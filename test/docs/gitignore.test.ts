// What termlab writes into the folder it runs in (by default, or by the names the guides give) is no part of the
// checkout: hand-ins, predictions, gradebooks, class reports and kubeconfigs must not pile up as untracked files.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARCHIVE_SUFFIX, PREDICTIONS_NAME } from '../../harness/pack/manifest.ts';
import { newRunId } from '../../harness/safety/labels.ts';
import { repoRoot } from '../support/processes.ts';

/** Each file a command in README.md or docs/*.md writes by name (-o, --gradebook, --html, …), placeholders left out. */
function namesInGuides(): string[] {
  const docs = [
    'README.md',
    ...readdirSync(join(repoRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const names = new Set<string>();
  for (const doc of docs)
    for (const line of readFileSync(join(repoRoot, doc), 'utf8').split('\n'))
      for (const m of line.includes('termlab ')
        ? line.matchAll(
            / (?:-o|--out|--output-file|--output-dir|--gradebook|--gradebook-json|--html|--md) ([^\s`\]]+)/g,
          )
        : [])
        if (!/^[A-Z]+$/.test(m[1]!)) names.add(m[1]!);
  return [...names].sort();
}

describe('.gitignore', () => {
  it("knows every file termlab writes into the checkout under its default or the guides' names", () => {
    const written = [
      `${newRunId()}${ARCHIVE_SUFFIX}`, // `termlab pack` without -o
      PREDICTIONS_NAME, // `termlab predict` without -o
      'reports/latest',
      'submissions/ada.tar.gz', // the instructor's folder of hand-ins
      ...namesInGuides(),
    ];
    expect(written).toEqual(expect.arrayContaining(['ada.tar.gz', 'sidecar-predictions.yaml', 'grades.csv']));
    const r = spawnSync('git', ['check-ignore', '--no-index', '--stdin'], { cwd: repoRoot, input: written.join('\n') });
    const ignored = new Set(r.stdout.toString().split('\n').filter(Boolean));
    expect(written.filter((name) => !ignored.has(name))).toEqual([]);
  });
});
