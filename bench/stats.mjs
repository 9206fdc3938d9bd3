// SPDX-License-Identifier: ISC
// stats.mjs: the one place bench/ computes its statistics: quantiles
// (linear between closest ranks, as numpy's default), median, the
// interquartile range, and the per-round ratio summary every row of the
// table shows.

export function quantile(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return s[lo] + (s[hi] - s[lo]) * (h - lo);
}

export const median = (xs) => quantile(xs, 0.5);

// [q1, q3]
export const iqr = (xs) => [quantile(xs, 0.25), quantile(xs, 0.75)];

// p50, p99 and the interquartile range of one side's samples.
export function summary(xs) {
  const [q1, q3] = iqr(xs);
  return { n: xs.length, p50: median(xs), p99: quantile(xs, 0.99), q1, q3 };
}

// Rounds of paired batches: ratio of the batches' medians per round
// (subject over reference), then the median ratio and its spread.
export function ratioSummary(rounds) {
  const r = rounds.map((x) => median(x.subject) / median(x.reference));
  const [q1, q3] = iqr(r);
  return {
    rounds: r.length, ratio: median(r), q1, q3,
    subject: summary(rounds.flatMap((x) => x.subject)),
    reference: summary(rounds.flatMap((x) => x.reference)),
  };
}
