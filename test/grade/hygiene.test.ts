// Input and output hygiene of `termlab grade`, as a user meets it: real processes, files, pipes.
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradeClass } from '../../harness/class/command.ts';
import { gradePaths } from '../../harness/grade/files.ts';
import { grade } from '../../harness/grade/grade.ts';
import { jsonDepth, parseJsonText, valueDepth } from '../../harness/observation/read.ts';
import { renderHtml } from '../../harness/report/html.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import { runCli } from '../support/cli.ts';
import { buildObservation } from '../support/observations.ts';
import { repoRoot } from '../support/processes.ts';

const offline = { KUBECONFIG: '/nonexistent/kubeconfig', HOME: mkdtempSync(join(tmpdir(), 'termlab-home-')) };
const examples = join(repoRoot, 'reports', 'examples');
const fresh = (prefix: string) => mkdtempSync(join(tmpdir(), `termlab-${prefix}-`));

describe.concurrent('termlab grade: inputs', () => {
  // A grader that opened the FIFO would wait for a writer that never comes, and one that read /dev/zero
  // would never reach its end: that the command ends, with this refusal and the other file graded, is the proof.
  it.each([
    ['a FIFO', (path: string) => execFileSync('mkfifo', [path])],
    ['a device', (path: string) => symlinkSync('/dev/zero', path)],
  ] as const)(
    'refuses %s named like an observation, without waiting or reading forever, and grades the rest',
    async (kind, make) => {
      const dir = fresh('observation-special');
      make(join(dir, 'x.observation.json'));
      copyFileSync(join(examples, 'cut-17-immediate.observation.json'), join(dir, 'y.observation.json'));
      const r = await runCli(['grade', dir], offline);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(new RegExp(`x\\.observation\\.json: not a regular file \\(${kind}\\): refused$`)),
      ]);
      expect(r.stdout).toContain('1 graded');
    },
  );

  it('refuses a FIFO or a link to /dev/zero named like an archive, without waiting or reading forever', async () => {
    const dir = fresh('archive-fifo');
    execFileSync('mkfifo', [join(dir, 'x.tar.gz')]);
    symlinkSync('/dev/zero', join(dir, 'z.tgz'));
    // A grader that opened the FIFO would wait for a writer that never comes, and one that read
    // /dev/zero would never reach its end: that the command ends at all, with this refusal, is the proof.
    for (const [name, kind] of [
      ['x.tar.gz', 'a FIFO'],
      ['z.tgz', 'a device'],
    ] as const) {
      const r = await runCli(['grade', join(dir, name)], offline);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${name}: not a regular file (${kind}): refused`);
    }
  });

  it('stops at Ctrl-C partway through a large folder, exit 130, though it reads each file at once', async () => {
    const dir = fresh('interrupt');
    const files = 4000;
    for (let i = 0; i < files; i++)
      copyFileSync(
        join(examples, 'cut-17-immediate.observation.json'),
        join(dir, `${String(i).padStart(4, '0')}.observation.json`),
      );
    const child = spawn(process.execPath, ['bin/termlab.js', 'grade', dir], {
      cwd: repoRoot,
      env: { ...process.env, ...offline },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '',
      stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    // Ctrl-C once the first results are out: the walk is under way.
    child.stdout.on('data', (d) => {
      if (!stdout) child.kill('SIGINT');
      stdout += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toContain('stopping cleanly');
    expect(code).toBe(130);
    // A walk that never gave the event loop a turn would hear the signal only after the last file.
    expect(stdout.split('\n').filter((l) => l.includes('.observation.json')).length).toBeLessThan(files);
  });

  it('walks a folder with symbolic-link loops to its end, grading each real file once', async () => {
    const dir = fresh('loops');
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    symlinkSync(join(dir, 'a'), join(dir, 'a', 'b', 'loop'));
    symlinkSync(dir, join(dir, 'a', 'up'));
    copyFileSync(
      join(repoRoot, 'reports', 'examples', 'cut-17-immediate.observation.json'),
      join(dir, 'a', 'b', 'one.observation.json'),
    );
    // A walk that followed the links would never end: that both walks end, with one file graded, is the proof.
    const graded = await gradePaths([dir]);
    expect(graded.results).toHaveLength(1);
    const { book } = await gradeClass([dir], null);
    expect(book.rows.map((r) => r.scenariosGraded)).toEqual([1]);
  });

  it('refuses invalid UTF-8 instead of replacing it', async () => {
    const dir = fresh('utf8');
    const text = Buffer.from(JSON.stringify(buildObservation()).replace('"uid-0001"', '"uid-00\u00ff1"'), 'utf8');
    const at = text.indexOf(Buffer.from('\u00ff', 'utf8'));
    text[at] = 0xff; // a lone 0xff byte: never valid UTF-8
    writeFileSync(join(dir, 'bad.observation.json'), text);
    const r = await runCli(['grade', dir], offline);
    expect(r).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/bad\.observation\.json: not valid UTF-8 \(byte \d+\)\n$/),
    });
  });

  it('refuses JSON nested deeper than an observation can be, before it exhausts the stack', () => {
    const deep = `{"schemaVersion": 2, "pod": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(() => parseJsonText(deep, 'deep.observation.json')).toThrow(
      /^deep\.observation\.json: \(top level\): nested 100001 levels deep/,
    );
    expect(parseJsonText('{"a": "[[[[{{{{"}', 'strings.json')).toEqual({ a: '[[[[{{{{' });
    const deepInObject = `{"run": {"x": ${'{"y": '.repeat(70)}1${'}'.repeat(70)}}}`;
    expect(() => parseJsonText(deepInObject, 'deep.observation.json')).toThrow(/nested 72 levels deep/);
  });

  it('counts the depth of a parsed value as the depth of its text', () => {
    const texts = [
      '1',
      '"[{"',
      '[]',
      '{}',
      '[[], {}]',
      '{"a": [{"b": []}], "c": {"d": "}}}}"}}',
      JSON.stringify(buildObservation()),
      `[${'{"k": ['.repeat(40)}${']}'.repeat(40)}]`,
    ];
    for (const text of texts) expect(valueDepth(JSON.parse(text)), text.slice(0, 40)).toBe(jsonDepth(text));
    // `__proto__` is an own key once parsed, and is walked.
    expect(valueDepth(JSON.parse(`{"__proto__": ${'['.repeat(70)}${']'.repeat(70)}}`))).toBe(71);
  });

  it('measures what the parse keeps: a deep value under a repeated key is discarded, unread', () => {
    const repeated = `{"a": ${'['.repeat(100)}${']'.repeat(100)}, "a": 1}`;
    expect(parseJsonText(repeated, 'repeated.json')).toEqual({ a: 1 });
  });

  it('names the syntax error of deep JSON that never closes', () => {
    expect(() => parseJsonText('['.repeat(100_000), 'open.observation.json')).toThrow(
      /^open\.observation\.json: \(top level\): not JSON/,
    );
  });

  it('grades a version 1 file, with a note', async () => {
    const r = await runCli(
      ['grade', join(repoRoot, 'test', 'grade', 'fixtures', 'v1-cut-137-after-grace.observation.json')],
      offline,
    );
    expect(r.code).toBe(1); // its lab pair lacks the restored half
    expect(r.stdout).toContain('✅ matches the model');
    expect(r.stdout).toContain('lab pair grace: inconclusive');
    expect(r.stdout).toMatch(/note: schema version 1: read and graded as version 7/);
  });

  it('shows control characters from a file escaped, on one line', async () => {
    const dir = fresh('ctl');
    const o = buildObservation();
    o.request.podUid = 'evil\u001b]8;;http://x\u0007link\u001b]8;;\u0007\rOVERWRITE';
    writeFileSync(join(dir, 'ctl.observation.json'), JSON.stringify(o));
    const r = await runCli(['grade', dir], offline);
    expect(r.stdout).not.toMatch(/[\u001b\u0007\r]/);
    expect(r.stdout).toContain('evil\\u{1b}]8;;http://x\\u{7}link');
  });
});

describe.concurrent('termlab grade: outputs', () => {
  it('ends quietly when stdout is closed early (| head -1)', async () => {
    const child = spawn(
      'bash',
      [
        '-c',
        `"${process.execPath}" bin/termlab.js grade reports/examples | head -1; echo "exit=\${PIPESTATUS[0]}" >&2`,
      ],
      { cwd: repoRoot, env: { ...process.env, ...offline } },
    );
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    await new Promise((resolve) => child.on('close', resolve));
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expect(stderr).not.toMatch(/EPIPE|internal error|at /);
    expect(stderr).toMatch(/exit=1\n$/); // the examples include failures on purpose
  });

  it('an unwritable report path is exit 2 with one line', async () => {
    const r = await runCli(['grade', examples, '--md', '/nonexistent-dir/r.md'], offline);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'termlab grade: /nonexistent-dir/r.md: cannot write the report: its folder does not exist',
    ]);
  });

  it('renders a report in time bounded by its size, whatever the times in the file', () => {
    const o = buildObservation();
    o.timeline.requestAccepted = { at: { mono: 0, wall: '2026-11-30T10:00:00.000Z' } };
    o.timeline.requestEnded = { at: { mono: 1e15, wall: '2026-11-30T10:00:00.000Z' } };
    const r = grade(o);
    const html = renderHtml([r]);
    expect((html.match(/class="tick"/g) ?? []).length).toBeLessThanOrEqual(61);
    expect(html.length).toBeLessThan(100_000);
    expect(renderMarkdown([r]).length).toBeLessThan(100_000);
  });

  it('escapes file strings in Markdown tables and code spans', () => {
    const o = buildObservation();
    o.run.runId = 'x | [link](http://evil) `code` <b>';
    const md = renderMarkdown([grade(o, { source: 'a_b*c.observation.json' })]);
    expect(md).toContain('x \\| \\[link\\](http://evil) \\`code\\` &lt;b&gt;');
    expect(md).not.toContain('<b>');
    expect(readFileSync(join(repoRoot, 'docs', 'grading.md'), 'utf8')).toContain('`evidence.request-reached-pod`');
  });
});
