// /api/cluster and /api/account/geo_cascade: the account's default cluster among the configured
// ones (docs/api.md#clusters), and its account-wide geo cascade setting, in the hosted shapes
// (ClustersInfoModel, GeoCascadeModel). The Node client sends both updates without a Content-Type:
// their bodies are read as JSON then (docs/compatibility.md, Clusters and geo cascade).
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { MAX_LIST } from '../../domain/tokens.js';
import { ALL_CLUSTERS, type Clusters } from '../../director/clusters.js';
import type { AccountGeoCascade, Store } from '../../store/store.js';
import { route, type RouteSpec } from '../route.js';
import type { AccountService } from '../../management/accounts.js';
import { text } from '../text.js';

/** The hosted UpdateClusterInfoModel. */
export const updateClusterSchema = z.strictObject({
  defaultCluster: text(1, 128).meta({ description: 'the id of a configured cluster (GET /api/cluster lists them); case-insensitive' }),
});

const locationOut = z.object({ city: z.string().nullable(), region: z.string().nullable(), country: z.string().nullable() });
/** The hosted ClustersInfoModel. */
export const clustersInfoOut = z.object({
  defaultCluster: z.string(),
  availableClusters: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      rtmp: z.string().meta({ description: 'RTMP publish host (director.clusters[].rtmp)' }),
      srt: z.string(),
      location: locationOut,
      features: z.object({ transcoding: z.boolean().meta({ description: 'always false: Streamgate does not transcode' }) }),
    }),
  ),
});

/** The hosted GeoCascadeModel (account-wide): isEnabled required; clusters null or absent = ["all"]. */
export const updateGeoCascadeSchema = z.strictObject({
  isEnabled: z.boolean(),
  clusters: z
    .array(text(1, 128))
    .max(MAX_LIST)
    .nullable()
    .optional()
    .meta({ description: 'cluster ids, or ["all"] (every cluster, now and later); null or absent = ["all"]; not empty when isEnabled' }),
});

/** The hosted GeoCascadeModel2 as this endpoint answers it. */
export const geoCascadeOut = z.object({ isEnabled: z.boolean(), clusters: z.array(z.string()) });

/** What an account that never set a geo cascade answers (and what its tokens that set none follow). */
export const NO_GEO_CASCADE: AccountGeoCascade = { isEnabled: false, clusters: [] };

const unknownCluster = (clusters: Clusters, id: string) => `unknown cluster '${id}': the available clusters are ${clusters.ids()}`;

export function clusterRoutes(store: Store, clusters: Clusters, accounts: AccountService): RouteSpec[] {
  const tag = 'Account';
  const current = async (accountId: string) => {
    const a = await store.getAccount(accountId);
    if (!a) throw ApiError.unauthorized();
    return a;
  };
  const info = (stored: string | undefined) => ({ defaultCluster: clusters.defaultOf(stored).id, availableClusters: clusters.view() });
  return [
    route({
      method: 'get',
      path: '/api/cluster',
      summary: "The account's default cluster and the clusters this deployment offers (director.clusters)",
      tag,
      auth: 'apiSecret',
      response: clustersInfoOut,
      handler: async ({ account }) => info((await current(account.id)).defaultCluster),
    }),
    route({
      method: 'put',
      path: '/api/cluster',
      summary: "Set the account's default cluster (serves its tokens that name no originCluster); answers as GET",
      tag,
      auth: 'apiSecret',
      jsonWithoutContentType: true,
      body: updateClusterSchema,
      response: clustersInfoOut,
      handler: async ({ account, body, actor }) => {
        const cluster = clusters.find(body.defaultCluster);
        if (!cluster) throw ApiError.field('defaultCluster', unknownCluster(clusters, body.defaultCluster));
        const updated = await accounts.update(account.id, { defaultCluster: cluster.id }, actor);
        if (!updated) throw ApiError.unauthorized();
        return info(updated.defaultCluster);
      },
    }),
    route({
      method: 'get',
      path: '/api/account/geo_cascade',
      summary: "The account's geo cascade setting (its publish tokens that set none follow it)",
      tag,
      auth: 'apiSecret',
      response: geoCascadeOut,
      handler: async ({ account }) => (await current(account.id)).geoCascade ?? NO_GEO_CASCADE,
    }),
    route({
      method: 'put',
      path: '/api/account/geo_cascade',
      summary: "Set the account's geo cascade: isEnabled, and the clusters (ids or [\"all\"]); answers the new setting",
      tag,
      auth: 'apiSecret',
      jsonWithoutContentType: true,
      body: updateGeoCascadeSchema,
      response: geoCascadeOut,
      handler: async ({ account, body, actor }) => {
        const next = geoCascadeOf(clusters, body.isEnabled, body.clusters);
        const updated = await accounts.update(account.id, { geoCascade: next }, actor);
        if (!updated) throw ApiError.unauthorized();
        return updated.geoCascade ?? NO_GEO_CASCADE;
      },
    }),
  ];
}

/**
 * The setting a request asks for, as the hosted API reads it: clusters null or absent mean
 * ["all"]; "all" (any case) stands alone for every cluster; other entries are configured cluster
 * ids, stored as configured and once each; an empty list only while disabled. Throws a 400 naming
 * `clusters` otherwise.
 */
export function geoCascadeOf(clusters: Clusters, isEnabled: boolean, given: string[] | null | undefined): AccountGeoCascade {
  if (given === null || given === undefined) return { isEnabled, clusters: [ALL_CLUSTERS] };
  if (isEnabled && given.length === 0) throw ApiError.field('clusters', `cannot be empty when isEnabled is true: name clusters, or ["${ALL_CLUSTERS}"] for every cluster`);
  if (given.some((id) => id.toLowerCase() === ALL_CLUSTERS)) return { isEnabled, clusters: [ALL_CLUSTERS] };
  const unknown = given.filter((id) => clusters.find(id) === undefined);
  if (unknown.length > 0) throw ApiError.field('clusters', unknownCluster(clusters, unknown[0]));
  return { isEnabled, clusters: [...new Set(given.map((id) => clusters.find(id)!.id))] };
}
