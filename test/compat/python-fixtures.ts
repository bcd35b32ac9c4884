// The requests the hosted platform's official Python REST client sends, byte for byte: method, path,
// query string, headers and body. Source: github.com/DolbyIO/dolbyio-rest-apis-client-python, package
// `dolbyio_rest_apis` release 5.0.0 (commit bbf90df842dc594ad064d73edbf305875b3ccd37, files
// client/src/dolbyio_rest_apis/streaming/{publish_token,subscribe_token,webhooks,account,stream}.py,
// streaming/models/*.py, streaming/internal/http_context.py, core/http_context.py).
//
// Captured by running the client's own functions with its HTTP layer replaced by a recorder, so
// each body is what the client builds, not a reading of it. How that client serialises:
// - bodies are `json.dumps(payload, indent=4)` (four-space indent, `": "` separators), sent with
//   `Content-Type: application/json`; GET and DELETE carry no body and no Content-Type;
// - optional fields go through `add_if_not_none`: an unset field is left out, never sent as null;
//   but fields whose model default is a value are always sent: on a publish token create
//   `subscribeRequiresAuth`, `record`, `multisource` (false), `enableThumbnails`,
//   `displaySrtPassphrase`, `lowLatencyRtmp` (true), `clip` and `restream: []`; on a publish token
//   update `clip: false`; on a webhook create `isThumbnailHooks`, `isTranscoderHooks` and
//   `isClipHooks` (false); on the account geo update both lists;
// - the expiry is sent as `expiresOn` (an ISO date-time), never `expires`;
// - `removeTokenStreams` entries are objects `{streamName, isRegex}`, not bare names;
// - query booleans are Python's `str(bool)`: `True` / `False`; numbers are `str(n)`;
// - the webhook list sends `item_count` (snake case) and always a `startingId`;
// - `stream.stop_all` posts the JSON text `null` as its body;
// - the geo update posts `allowedCountries` / `deniedCountries` (the hosted schema names them
//   `updateAllowedCountries` / `updateDeniedCountries`).
// That release has no list_by_name, list_by_cluster, subscribe-token disable or webhook test call.
//
// The cluster and geo cascade calls (streaming/cluster.py `read`/`update`, streaming/account.py
// `read_geo_cascade`/`update_geo_cascade`, same commit) were taken from the source rather than the
// recorder: each function's payload dict (`{'defaultCluster': default_cluster}`; `{'isEnabled':
// geo_cascade.is_enabled}` plus `clusters` through add_if_not_none, whose model default is `[]`, so
// a default AccountGeoCascade sends `"clusters": []`) serialised with the client's own
// `json.dumps(payload, indent=4)`, and the headers of `requests_get` / `requests_put` above.
//
// Placeholders `{{apiSecret}}`, `{{accountId}}`, `{{publishTokenId}}`, `{{minimalTokenId}}`,
// `{{subscribeTokenId}}`, `{{webhookId}}` stand for values the replay learns as it goes; the
// User-Agent is the client's own format (its Python version varies). `later`: the endpoint is
// not served yet; the shape is kept for when it is.

export interface PythonCall {
  /** The client function that sends this request. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** The exact query string, without '?'; '' for none. */
  query: string;
  headers: Record<string, string>;
  /** The exact body text. */
  body?: string;
  later?: true;
}

/** In the order the replay sends them (each call may use ids learned from the ones before). */
export const pythonCalls: PythonCall[] = [
  {
    name: 'publish_token.create',
    method: 'POST',
    path: '/api/publish_token',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "label": "py-studio",
    "streams": [
        {
            "streamName": "cam1",
            "isRegex": false
        },
        {
            "streamName": "cam[0-9]+",
            "isRegex": true
        }
    ],
    "subscribeRequiresAuth": false,
    "record": false,
    "multisource": false,
    "enableThumbnails": false,
    "displaySrtPassphrase": false,
    "lowLatencyRtmp": true,
    "clip": false,
    "restream": [],
    "expiresOn": "2090-01-01T00:00:00Z",
    "allowedOrigins": [
        "*.example.com"
    ],
    "allowedCountries": [
        "US",
        "CA"
    ]
}`,
  },
  {
    name: 'publish_token.create (defaults only)',
    method: 'POST',
    path: '/api/publish_token',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "label": "py-minimal",
    "streams": [
        {
            "streamName": "backstage",
            "isRegex": false
        }
    ],
    "subscribeRequiresAuth": false,
    "record": false,
    "multisource": false,
    "enableThumbnails": false,
    "displaySrtPassphrase": false,
    "lowLatencyRtmp": true,
    "clip": false,
    "restream": []
}`,
  },
  {
    name: 'publish_token.read',
    method: 'GET',
    path: '/api/publish_token/{{publishTokenId}}',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'publish_token.update',
    method: 'PUT',
    path: '/api/publish_token/{{publishTokenId}}',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "label": "py-studio-2",
    "addTokenStreams": [
        {
            "streamName": "backup",
            "isRegex": false
        }
    ],
    "removeTokenStreams": [
        {
            "streamName": "cam[0-9]+",
            "isRegex": true
        }
    ],
    "updateAllowedOrigins": [
        "studio.example.com"
    ],
    "subscribeRequiresAuth": true,
    "clip": false
}`,
  },
  {
    name: 'publish_token.list_tokens',
    method: 'GET',
    path: '/api/publish_token/list',
    query: 'sortBy=Name&page=1&itemsOnPage=25&isDescending=False',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'publish_token.list_tokens (descending)',
    method: 'GET',
    path: '/api/publish_token/list',
    query: 'sortBy=AddedOn&page=1&itemsOnPage=10&isDescending=True',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'publish_token.get_active_publish_token_id',
    method: 'GET',
    path: '/api/publish_token/active',
    query: 'streamId={{accountId}}/cam1',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'publish_token.get_all_active_publish_token_id',
    method: 'GET',
    path: '/api/publish_token/active/all',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'publish_token.disable',
    method: 'PATCH',
    path: '/api/publish_token/disable',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "tokenIds": [
        {{minimalTokenId}}
    ]
}`,
  },
  {
    name: 'subscribe_token.create',
    method: 'POST',
    path: '/api/subscribe_token',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "label": "py-viewers",
    "streams": [
        {
            "streamName": "cam1",
            "isRegex": false
        },
        {
            "streamName": "vip-.*",
            "isRegex": true
        }
    ],
    "allowedIpAddresses": [
        "203.0.113.0/24"
    ],
    "tracking": {
        "trackingId": "group-a"
    }
}`,
  },
  {
    name: 'subscribe_token.read',
    method: 'GET',
    path: '/api/subscribe_token/{{subscribeTokenId}}',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'subscribe_token.update',
    method: 'PUT',
    path: '/api/subscribe_token/{{subscribeTokenId}}',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "label": "py-viewers-2",
    "addTokenStreams": [
        {
            "streamName": "cam2",
            "isRegex": false
        }
    ],
    "removeTokenStreams": [
        {
            "streamName": "vip-.*",
            "isRegex": true
        }
    ],
    "updateAllowedIpAddresses": [],
    "updateDeniedCountries": [
        "FR"
    ]
}`,
  },
  {
    name: 'subscribe_token.list_tokens',
    method: 'GET',
    path: '/api/subscribe_token/list',
    query: 'sortBy=Name&page=1&itemsOnPage=25&isDescending=False',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'webhooks.create',
    method: 'POST',
    path: '/api/webhooks',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "url": "https://127.0.0.1:8443/streamgate-hook",
    "isFeedHooks": true,
    "isRecordingHooks": false,
    "isThumbnailHooks": false,
    "isTranscoderHooks": false,
    "isClipHooks": false
}`,
  },
  {
    name: 'webhooks.read',
    method: 'GET',
    path: '/api/webhooks/{{webhookId}}',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'webhooks.update',
    method: 'PUT',
    path: '/api/webhooks/{{webhookId}}',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "refreshSecret": true,
    "isThumbnailHooks": true
}`,
  },
  {
    name: 'webhooks.list_webhooks',
    method: 'GET',
    path: '/api/webhooks/list',
    query: 'startingId={{webhookId}}&item_count=10&isDescending=False',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'account.read_geo_restrictions',
    method: 'GET',
    path: '/api/geo/account',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'account.update_geo_restrictions',
    method: 'POST',
    path: '/api/geo/account',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "allowedCountries": [
        "US"
    ],
    "deniedCountries": []
}`,
  },
  {
    name: 'cluster.read',
    method: 'GET',
    path: '/api/cluster',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'cluster.update',
    method: 'PUT',
    path: '/api/cluster',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "defaultCluster": "us-1"
}`,
  },
  {
    name: 'account.read_geo_cascade',
    method: 'GET',
    path: '/api/account/geo_cascade',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'account.update_geo_cascade',
    method: 'PUT',
    path: '/api/account/geo_cascade',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "isEnabled": true,
    "clusters": [
        "us-1",
        "eu-1"
    ]
}`,
  },
  {
    name: 'account.update_geo_cascade (defaults)',
    method: 'PUT',
    path: '/api/account/geo_cascade',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "isEnabled": false,
    "clusters": []
}`,
  },
  {
    name: 'webhooks.delete',
    method: 'DELETE',
    path: '/api/webhooks/{{webhookId}}',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'subscribe_token.delete',
    method: 'DELETE',
    path: '/api/subscribe_token/{{subscribeTokenId}}',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'publish_token.delete',
    method: 'DELETE',
    path: '/api/publish_token/{{publishTokenId}}',
    query: '',
    headers: { Accept: 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
  },
  {
    name: 'stream.stop',
    method: 'POST',
    path: '/api/stream/stop',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `{
    "streamId": "{{accountId}}/cam1"
}`,
  },
  {
    name: 'stream.stop_all',
    method: 'POST',
    path: '/api/stream/stop/all',
    query: '',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer {{apiSecret}}', 'User-Agent': 'DolbyIoRestApiSdk/5.0.0; Python/3.11.7' },
    body: `null`,
  },
];
