// The prediction line `termlab run` and `termlab grade` both print: one helper, its two forms, escaped.
import { describe, expect, it } from 'vitest';
import { predictionLines } from '../../harness/report/format.ts';

describe('the prediction line on the terminal', () => {
  it('shows a right prediction with ✓, any other with its status, and only the prediction checks', () => {
    const checks = [
      { id: 'prediction.vs-model', status: 'pass', reason: 'your prediction cut/137 agrees with the kubelet model' },
      { id: 'grace.kill', status: 'fail', reason: 'not a prediction' },
      { id: 'prediction.present', status: 'warn', reason: 'no prediction for this scenario' },
    ];
    expect(predictionLines({ checks })).toEqual([
      'prediction ✓ your prediction cut/137 agrees with the kubelet model',
      'prediction warn: no prediction for this scenario',
    ]);
  });

  it('escapes what the reason carries from a file', () => {
    const checks = [{ id: 'prediction.vs-model', status: 'fail', reason: 'you predicted \u001b[2Jcut/137' }];
    expect(predictionLines({ checks })).toEqual(['prediction fail: you predicted \\u{1b}[2Jcut/137']);
  });
});
