// The hosted analytics shapes, for tests that assert answers of /api/analytics/*.

/** A tracking/total (and tracking/series) row: all of Streamgate's usage is standard-stream usage. */
export const trackingRow = (streamName: string, bytesOut: number, bytesIn: number) => ({
  streamName,
  standardStream: { bytesOut, bytesIn },
  restream: { bytesOut: 0, bytesIn: 0, duration: 0 },
  geoCascade: { bytesOut: 0, bytesIn: 0 },
});

/** A streams/total entry. */
export const streamTotal = (bytesOut: number, bytesIn: number) => ({
  bytesOut,
  bytesIn,
  standardStream: { bytesOut, bytesIn },
  restream: { bytesOut: 0, bytesIn: 0, secondsUsed: 0 },
  geoCascade: { bytesOut: 0, bytesIn: 0 },
});

/** A streams/series entry from [period key, bytesOut, bytesIn] in order. */
export const streamSeries = (points: Array<[string, number, number]>) => ({
  bandwidth: Object.fromEntries(points.map(([k, o, i]) => [k, { bytesOut: o, bytesIn: i }])),
  standardStream: Object.fromEntries(points.map(([k, o, i]) => [k, { bytesOut: o, bytesIn: i }])),
  restream: Object.fromEntries(points.map(([k]) => [k, { bytesOut: 0, bytesIn: 0, secondsUsed: 0 }])),
  geoCascade: Object.fromEntries(points.map(([k]) => [k, { bytesOut: 0, bytesIn: 0 }])),
});

/** A tracking/streams row (trackingId null: the usage without a tracking id). */
export const streamTrackingRow = (trackingId: string | null, bytesOut: number, bytesIn: number) => ({
  trackingId,
  standardStream: { bytesOut, bytesIn },
  restream: { bytesOut: 0, bytesIn: 0, duration: 0 },
  geoCascade: { bytesOut: 0, bytesIn: 0 },
});
