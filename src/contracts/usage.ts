// A usage report as a caller hands it to the usage service (docs/api.md#analytics-bandwidth-per-tracking-id-and-per-stream).
export interface UsageReport {
  reportId?: string;
  sessionId?: string;
  caller?: string;
  tokenId?: number;
  trackingId?: string;
  accountId?: string;
  streamName?: string;
  bytesOut: number;
  bytesIn?: number;
  /** epoch ms */
  at?: number;
}
