// Clusters (docs/api.md#clusters): named sets of director URLs from `director.clusters`. A token's
// originCluster, else its account's default cluster, picks the set the director answers with.
// With none configured there is one implicit cluster, `auto`, made of the director's own URLs.
import { z } from 'zod';
import { rtmpUrlTemplate } from './settings.js';

/** The id of the one cluster a deployment without `director.clusters` has. */
export const IMPLICIT_CLUSTER = 'auto';

/** The id for `geoCascade.clusters` meaning every cluster, now and later (the hosted API's `["all"]`). */
export const ALL_CLUSTERS = 'all';

const place = z.string().min(1).max(128).nullable().optional();

/** One entry of director.clusters. */
export const clusterSettingsSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits and _ . - only, 1..64, starting with a letter or digit')
    .refine((id) => id.toLowerCase() !== ALL_CLUSTERS, `'${ALL_CLUSTERS}' means every cluster in a geo cascade: choose another id`),
  name: z.string().min(1).max(128).optional(),
  publishUrls: z.array(z.string().min(1)).min(1),
  subscribeUrls: z.array(z.string().min(1)).min(1),
  // empty: Rtmp publishing is not offered from this cluster (a 400 naming streamType)
  rtmpPublishUrls: z.array(rtmpUrlTemplate).default([]),
  // shown in GET /api/cluster; rtmp defaults to the host of the first rtmpPublishUrls entry
  rtmp: z.string().max(255).optional(),
  srt: z.string().max(255).optional(),
  location: z.strictObject({ city: place, region: place, country: place }).optional(),
});

export const clustersSchema = z.array(clusterSettingsSchema).superRefine((list, ctx) => {
  const seen = new Map<string, number>();
  list.forEach((c, i) => {
    const key = c.id.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `'${c.id}' is the id of entry ${first} already (ids are compared case-insensitively)` });
    else seen.set(key, i);
  });
});

/** Where a cluster is, as the hosted LocationModel shows it (null when not configured). */
export interface ClusterLocation {
  city: string | null;
  region: string | null;
  country: string | null;
}

export interface Cluster {
  id: string;
  name: string;
  publishUrls: string[];
  subscribeUrls: string[];
  rtmpPublishUrls: string[];
  rtmp: string;
  srt: string;
  location: ClusterLocation;
}

/** A cluster as the hosted API's ClusterModel shows it. */
export interface ClusterView {
  id: string;
  name: string;
  rtmp: string;
  srt: string;
  location: ClusterLocation;
  features: { transcoding: boolean };
}

/** The host of an RTMP URL template (`rtmp://ingest.example.com:1935/live/{streamName}` → ingest.example.com), '' when none. */
function rtmpHost(templates: readonly string[]): string {
  const m = templates.length > 0 ? /^rtmps?:\/\/([^/?:\s]+|\[[^\]]+\])/i.exec(templates[0]) : null;
  return m ? m[1] : '';
}

export interface DirectorUrls {
  publishUrls: string[];
  subscribeUrls: string[];
  rtmpPublishUrls: string[];
  clusters: Array<z.output<typeof clusterSettingsSchema>>;
}

export class Clusters {
  /** Every cluster, in configuration order; the first is the default of an account that names none. */
  readonly all: readonly Cluster[];
  /** No clusters configured: the one implicit cluster `auto`. */
  readonly implicit: boolean;
  private readonly byId: Map<string, Cluster>;

  constructor(director: DirectorUrls) {
    const noPlace: ClusterLocation = { city: null, region: null, country: null };
    this.implicit = director.clusters.length === 0;
    this.all = this.implicit
      ? [
          {
            id: IMPLICIT_CLUSTER,
            name: IMPLICIT_CLUSTER,
            publishUrls: director.publishUrls,
            subscribeUrls: director.subscribeUrls,
            rtmpPublishUrls: director.rtmpPublishUrls,
            rtmp: rtmpHost(director.rtmpPublishUrls),
            srt: '',
            location: noPlace,
          },
        ]
      : director.clusters.map((c) => ({
          id: c.id,
          name: c.name ?? c.id,
          publishUrls: c.publishUrls,
          subscribeUrls: c.subscribeUrls,
          rtmpPublishUrls: c.rtmpPublishUrls,
          rtmp: c.rtmp ?? rtmpHost(c.rtmpPublishUrls),
          srt: c.srt ?? '',
          location: { city: c.location?.city ?? null, region: c.location?.region ?? null, country: c.location?.country ?? null },
        }));
    this.byId = new Map(this.all.map((c) => [c.id.toLowerCase(), c]));
  }

  /** The configured cluster of that id (case-insensitive), else undefined. */
  find(id: string | undefined): Cluster | undefined {
    return id ? this.byId.get(id.toLowerCase()) : undefined;
  }

  /** An account's default cluster: the one it set, while configured; else the first configured (or `auto`). */
  defaultOf(stored: string | undefined): Cluster {
    return this.find(stored) ?? this.all[0];
  }

  /** The cluster that serves a token: its originCluster while configured, else its account's default. */
  pick(originCluster: string | undefined, accountDefault: string | undefined): Cluster {
    return this.find(originCluster) ?? this.defaultOf(accountDefault);
  }

  /** Whether any cluster offers RTMP ingest. */
  get anyRtmp(): boolean {
    return this.all.some((c) => c.rtmpPublishUrls.length > 0);
  }

  /** The ids, for messages: `eu-1, us-1`. */
  ids(): string {
    return this.all.map((c) => c.id).join(', ');
  }

  /** GET /api/cluster's availableClusters. Streamgate transcodes nothing: `transcoding` is false. */
  view(): ClusterView[] {
    return this.all.map((c) => ({ id: c.id, name: c.name, rtmp: c.rtmp, srt: c.srt, location: { ...c.location }, features: { transcoding: false } }));
  }
}
