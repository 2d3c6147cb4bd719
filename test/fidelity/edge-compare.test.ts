// The edge scenarios' fidelity comparison: it fails when the sides differ in what the edge model grades (its
// verdict, failures, the causes it expects or rules out, the answers to the expected failures) and passes when
// only what the model allows or never grades (a possible race, the lag's size, the exit) differs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareEdgeSides } from '../../dev/fidelity/edge-compare.ts';
import { renderEdgeSection } from '../../dev/fidelity/edge-report.ts';
import { answerKind, type EdgeRunSummary, summarizeEdge } from '../../dev/fidelity/edge-summary.ts';
import { renderFidelity } from '../../dev/fidelity/report.ts';
import { SideFileSchema } from '../../dev/fidelity/summary.ts';
import type { EdgeObservation } from '../../harness/observation/edge.ts';

const NODE_NO_PRESTOP = new URL('../grade/fixtures/edge/node-edge-no-prestop.observation.json', import.meta.url);

const LAG = 'edge-routed-to-removed-endpoint';
const RACE = 'keepalive-closed-by-app';
const MODEL_A = {
  [LAG]: 'expected',
  [RACE]: 'possible',
  'no-endpoint-at-edge': 'none',
  'refused after TERM': 'possible',
  'cut at the pod': 'none',
} as const;
const BAD_GATEWAY = '502 "Bad Gateway"';
const DRAINING = '503 from the app: rejected draining';

/** One run of (a): the edge's lag fails some requests with 502s and the app's 503s. */
function run(repetition: number, over: Partial<EdgeRunSummary> = {}): EdgeRunSummary {
  return {
    scenario: 'edge-no-prestop',
    repetition,
    complete: true,
    incompleteReason: null,
    verdict: 'matches-model',
    requests: 800,
    failed: 60,
    model: { ...MODEL_A },
    seen: { [LAG]: 60, [RACE]: 0, 'no-endpoint-at-edge': 0, 'refused after TERM': 0, 'cut at the pod': 0 },
    causes: { [LAG]: 60 },
    answers: { [LAG]: { [BAD_GATEWAY]: 50, [DRAINING]: 10 } },
    lagSeconds: [0.1, 0.9, 1.9],
    termToEndedSeconds: [0.2, 0.3, 0.2],
    oldPodExitCodes: [0, 0, 0],
    edgeRetried: 0,
    ...over,
  };
}
const three = (over: (rep: number) => Partial<EdgeRunSummary> = () => ({})) => [1, 2, 3].map((r) => run(r, over(r)));

describe('edge fidelity: one run summarized', () => {
  it("reduces the node's recorded (a) to the model's grade, its causes and the answers the clients got", () => {
    const o = JSON.parse(readFileSync(NODE_NO_PRESTOP, 'utf8')) as EdgeObservation;
    const s = summarizeEdge(o, 1);
    expect(s.verdict).toBe('matches-model');
    expect(s.model[LAG]).toBe('expected');
    expect(s.seen[LAG]).toBe(s.failed);
    expect(s.failed).toBeGreaterThan(0);
    // The real Traefik's answers: its own 502, the draining app's 503, and no answer at all (a dial to the
    // deleted pod's vanished IP hangs: the client's limit ends it).
    expect(Object.keys(s.answers[LAG]!).sort()).toEqual([BAD_GATEWAY, DRAINING, 'no answer: ETIMEDOUT']);
    expect(Object.values(s.answers[LAG]!).reduce((a, b) => a + b, 0)).toBe(s.failed);
    expect(s.lagSeconds.length).toBe(s.failed);
    expect(s.oldPodExitCodes).toHaveLength(3);
  });

  it('names an answer by what does not vary per request', () => {
    const base = { outcome: 'http-error', errorCode: null } as const;
    expect(answerKind({ ...base, status: 502, bodyHead: 'Bad Gateway' })).toBe(BAD_GATEWAY);
    expect(answerKind({ ...base, status: 503, bodyHead: 'no available server\n' })).toBe(
      '503 "no available server\\n"',
    );
    expect(
      answerKind({ ...base, status: 503, bodyHead: '{"event":"rejected","id":"L338","reason":"draining"}\n' }),
    ).toBe(DRAINING);
    expect(answerKind({ status: null, bodyHead: null, outcome: 'failed', errorCode: 'ECONNRESET' })).toBe(
      'no answer: ECONNRESET',
    );
    expect(answerKind({ status: 200, bodyHead: null, outcome: 'cut', errorCode: 'ECONNRESET' })).toBe(
      '200 "", then ECONNRESET',
    );
  });
});

describe('edge fidelity: the two sides compared', () => {
  it('agrees when the grade, the failures, the causes and the usual answers match, however far apart the lag is', () => {
    const [c] = compareEdgeSides(
      three(() => ({ lagSeconds: [0.01, 0.02] })),
      three(() => ({ lagSeconds: [1.2, 2.9], termToEndedSeconds: [1.7, 3.5, 25.3] })),
    );
    expect(c!.disagreements).toEqual([]);
    expect(c!.sim!.lag!.max).toBe(0.02);
    expect(c!.node!.lag!.max).toBe(2.9);
  });

  it("disagrees when the model's verdict differs", () => {
    const [c] = compareEdgeSides(
      three(),
      three(() => ({ verdict: 'differs-from-model' })),
    );
    expect(c!.disagreements).toEqual([expect.stringMatching(/^the model's verdict: sim matches-model/)]);
  });

  it('disagrees when a cause the model expects is seen on one side only', () => {
    const none = { failed: 0, seen: { ...run(1).seen, [LAG]: 0 }, causes: {}, answers: {} };
    const [c] = compareEdgeSides(
      three(),
      three(() => none),
    );
    expect(c!.disagreements).toEqual([
      expect.stringMatching(/^requests failed: on the sim only/),
      expect.stringMatching(new RegExp(`^${LAG} \\(the model: expected\\): seen on the sim only`)),
    ]);
  });

  it('disagrees when a cause the model rules out is seen on one side only', () => {
    const cut = { seen: { ...run(1).seen, 'cut at the pod': 4 } };
    const [c] = compareEdgeSides(
      three(() => cut),
      three(),
    );
    expect(c!.disagreements).toEqual([expect.stringMatching(/^cut at the pod \(the model: none\): seen on the sim/)]);
  });

  it('does not compare a cause the model only allows: a race caught in some runs is chance', () => {
    const race = { seen: { ...run(1).seen, [RACE]: 2 }, answers: { ...run(1).answers, [RACE]: { [BAD_GATEWAY]: 2 } } };
    const [c] = compareEdgeSides(
      three(() => race),
      three(),
    );
    expect(c!.disagreements).toEqual([]);
    expect(renderEdgeSection([c!]).join('\n')).toContain(
      `| ${RACE} | possible | seen (2 / 2 / 2) | not seen (0 / 0 / 0) | no |`,
    );
  });

  it('disagrees when most runs of one side answer the expected failures in a way the other never does', () => {
    const hang = { answers: { [LAG]: { [BAD_GATEWAY]: 20, [DRAINING]: 10, 'no answer: ETIMEDOUT': 30 } } };
    const [c] = compareEdgeSides(
      three(),
      three(() => hang),
    );
    expect(c!.disagreements).toEqual(['answers to the expected failures: node only no answer: ETIMEDOUT']);
  });

  it('counts an answer one run of three gave as chance, not a kind of the side', () => {
    const once = (rep: number) =>
      rep === 2 ? { answers: { [LAG]: { [BAD_GATEWAY]: 50, [DRAINING]: 9, 'no answer: ETIMEDOUT': 1 } } } : {};
    const [c] = compareEdgeSides(three(), three(once));
    expect(c!.disagreements).toEqual([]);
  });

  it('agrees when a kind most runs of one side gave came in fewer runs of the other: the same mechanism, another rate', () => {
    const hang = { answers: { [LAG]: { [BAD_GATEWAY]: 20, [DRAINING]: 10, 'no answer: ETIMEDOUT': 30 } } };
    const [c] = compareEdgeSides(
      three((rep) => (rep === 3 ? hang : {})),
      three(() => hang),
    );
    expect(c!.disagreements).toEqual([]);
  });

  it('disagrees when one side did not run the scenario', () => {
    const [c] = compareEdgeSides(three(), []);
    expect(c!.disagreements).toEqual(['only the simulated side ran it']);
  });

  it('fidelity.md counts the edge scenarios in its headline, and a side file without them still reads', () => {
    const sim = SideFileSchema.parse({ side: 'sim', cluster: 'v1.37.2-termlab-sim', recordedAt: 'x', runs: [] });
    const node = { ...sim, side: 'node' as const, cluster: 'v1.37.2', edgeRuns: three() };
    const edge = compareEdgeSides(three(), node.edgeRuns);
    const hook = { lag: { sim: '', node: '' }, own: { sim: '', node: '' } };
    const md = renderFidelity([], [], sim, node, hook, edge);
    expect(md).toContain('**1 of 1 scenarios agree** (the pod scenarios 0 of 0, the edge scenarios 1 of 1');
    expect(md).toContain('## edge-no-prestop (edge)');
  });
});
