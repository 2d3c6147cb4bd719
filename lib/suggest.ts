// "Did you mean": the valid name nearest to a mistyped one (flags, scenario fields).

/** Edit distance: small strings only. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The name nearest to `word`, when it is near enough to be a typo (or the prefix of exactly one name). */
export function nearest(word: string, names: string[]): string | null {
  const prefixed = names.filter((f) => f.startsWith(word));
  if (prefixed.length === 1) return prefixed[0]!;
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const f of names) {
    const d = distance(word, f);
    if (d < bestDistance) {
      best = f;
      bestDistance = d;
    }
  }
  return best;
}
