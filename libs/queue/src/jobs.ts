import { REQUEST_ID } from '#libs/core';

/** Every queue and the jobs it carries. Each job name has exactly one processor (checked at worker start). */
export const QUEUES = {
  system: ['system.ping', 'credits.sweep', 'renders.purge', 'assets.sweep', 'transcriptions.sweep'],
  webhooks: ['webhooks.dispatch', 'webhooks.deliver-event', 'webhooks.deliver'],
  /** Stills only: a render waits on these synchronously, so nothing slow ever queues in front of them. */
  stills: ['still.render'],
  /**
   * Videos: one job per render, retried on another worker when one dies; a long mp4 becomes a flow of
   * `video.chunk` jobs (frame ranges, any worker) under a `video.combine` job that joins them.
   */
  videos: ['video.render', 'video.chunk', 'video.combine'],
  /** Uploaded assets: typed, measured, thumbnailed (and an SVG sanitised) before they are `ready`. */
  assets: ['asset.process'],
  /** Transcriptions (docs/captions.md): a recording read, recognised (or found in the cache), cut into cues. */
  captions: ['transcription.run'],
  /**
   * Workflow runs (docs/workflows.md): a flow per run, a `workflow.row` child per row (its render, then
   * its steps) under one `workflow.run` parent that settles the run once every row has.
   */
  workflows: ['workflow.row', 'workflow.run'],
  /** Broadcast campaigns (docs/messaging.md "Campaigns"): a few runners per campaign share its recipients across the workers. */
  campaigns: ['campaign.send'],
} as const;

export type QueueName = keyof typeof QUEUES;
export type JobName = (typeof QUEUES)[QueueName][number];

export interface JobPayloads {
  'system.ping': { nonce: string; sentAt: number };
  /** Releases holds of renders that were lost (older than maxAgeSec, never settled). */
  'credits.sweep': { maxAgeSec?: number };
  /** Deletes the stored outputs of renders past their expiresAt; fails stills lost with their worker. */
  'renders.purge': { now?: string };
  /** Removes uploads that stopped half-way and stored files no asset owns. */
  'assets.sweep': { now?: string };
  /** Hands transcriptions whose job was lost to the workers again; fails those of a render whose worker died. */
  'transcriptions.sweep': { now?: string };
  /** Processes one uploaded asset (the record says where its bytes are). */
  'asset.process': { assetId: string };
  /** Runs one transcription (the record holds the source and the settings). */
  'transcription.run': { transcriptionId: string };
  /** One row of a workflow run: its render and its steps, each skipped when already done (libs/workflows). */
  'workflow.row': { runId: string; rowId: string };
  /** Settles a workflow run once its rows have run (the flow's parent). */
  'workflow.run': { runId: string };
  /** One runner of a campaign: sends its queued recipients at the campaign's rate until none is left. */
  'campaign.send': { campaignId: string; workspaceId: string; runner: number };
  /** Fans undispatched outbox events out into deliveries. */
  'webhooks.dispatch': Record<string, never>;
  /**
   * The first attempts of the deliveries of one or more consecutive events (`eventId`: the first;
   * the job's id is stored on each delivery, libs/webhooks `assignJobs`): the deliveries it leaves
   * due for a retry each get a `webhooks.deliver` job.
   */
  'webhooks.deliver-event': { eventId: string; deliveryIds: string[] };
  /**
   * One attempt of one delivery; BullMQ retries it on the §6 schedule. `after`: the attempts made
   * before this job (a retry of a `webhooks.deliver-event` attempt), 0 when absent.
   */
  'webhooks.deliver': { deliveryId: string; after?: number };
  /** Renders one video render (the record holds the edit); the worker moves it through its states. */
  'video.render': { renderId: string };
  /** Frames `from`..`to` (inclusive) of a chunked render, stored under `work/chunks/<renderId>-<token>/`. */
  'video.chunk': { renderId: string; token: string; index: number; from: number; to: number; totalFrames: number };
  /** Joins a chunked render's chunks (its children), stores the output and settles the render. */
  'video.combine': { renderId: string; token: string };
  /** Draws one still (a normalised edit spec) and stores it under `key`. */
  'still.render': {
    edit: EditSpecJson;
    key: string;
    scale: number;
    watermark: boolean;
    renderId?: string;
    /** Template image fields with an aspect ratio (checked on the downloaded pictures). */
    aspectRules?: { path: string; url: string; aspectRatio: string }[];
  };
}

/** A normalised edit spec as it travels through Redis (libs/edit-spec `EditSpec`). */
export type EditSpecJson = { timeline: Record<string, unknown>; output: Record<string, unknown> } & Record<string, unknown>;

/** A failure the caller should see as an API error (422 and friends), not a crashed job. */
export interface JobError {
  code: string;
  message: string;
  errors?: Record<string, string[]>;
}

export type StillRenderResult =
  | {
      ok: true; key: string; url: string; format: 'png' | 'jpeg' | 'pdf'; contentType: string; width: number; height: number; sizeBytes: number; renderMs: number;
      /** Milliseconds per step in the worker: draw (the engine), store (storage write), settle (database). */
      timings?: { draw: number; store: number; settle?: number };
    }
  | { ok: false; error: JobError };

export interface JobResults {
  'system.ping': { nonce: string; worker: string; latencyMs: number };
  'credits.sweep': { released: string[] };
  'renders.purge': { purged: number; lost: number };
  'assets.sweep': { uploads: number; orphans: number };
  'transcriptions.sweep': { requeued: number; failed: number };
  'asset.process': { status: string };
  'transcription.run': { status: string };
  'campaign.send': { sent: number; status: string };
  'webhooks.dispatch': { deliveries: number };
  'webhooks.deliver-event': { attempted: number; retries: number };
  'webhooks.deliver': { outcome: string };
  'still.render': StillRenderResult;
  'video.render': { status: string };
  'video.chunk': VideoChunkResult;
  'video.combine': { status: string };
  'workflow.row': { status: string };
  'workflow.run': { status: string };
}

/** A stored chunk (libs/video VideoChunk with storage keys for files), or why there is none. */
export type VideoChunkResult =
  | { ok: true; index: number; frameRange: [number, number]; videoKey: string; audioKey?: string; fps: number; totalFrames: number; codec: 'h264' | 'h265'; worker: string }
  | { ok: false; status: string };

export type JobOf<N extends JobName> = { name: N; data: JobPayloads[N] };

/** The job names a queue carries. */
export type JobNameOf<Q extends QueueName> = (typeof QUEUES)[Q][number];

export const ALL_JOBS: readonly JobName[] = Object.values(QUEUES).flat();

export const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];

type Check = (d: Record<string, unknown>, fail: (why: string) => never) => void;

const renderId: Check = (d, fail) => {
  if (typeof d.renderId !== 'string' || !d.renderId.startsWith('rnd_')) fail('renderId must be a render id');
};
const runId: Check = (d, fail) => {
  if (typeof d.runId !== 'string' || !d.runId.startsWith('wfr_')) fail('runId must be a workflow run id');
};
const chunkToken: Check = (d, fail) => {
  renderId(d, fail);
  if (typeof d.token !== 'string' || !/^[a-f0-9]{16,64}$/.test(d.token)) fail('token must be hex');
};

/** The shape check of each job's payload (one per name: the mapped type makes a missing one a type error). */
const CHECKS: { readonly [N in JobName]: Check } = {
  'system.ping': (d, fail) => {
    if (typeof d.nonce !== 'string' || !d.nonce) fail('nonce must be a non-empty string');
    if (typeof d.sentAt !== 'number') fail('sentAt must be a number');
  },
  'credits.sweep': (d, fail) => {
    if (d.maxAgeSec !== undefined && (typeof d.maxAgeSec !== 'number' || d.maxAgeSec < 0)) fail('maxAgeSec must be a non-negative number');
  },
  'renders.purge': (d, fail) => {
    if (d.now !== undefined && (typeof d.now !== 'string' || Number.isNaN(Date.parse(d.now)))) fail('now must be an ISO date');
  },
  'assets.sweep': (d, fail) => {
    if (d.now !== undefined && (typeof d.now !== 'string' || Number.isNaN(Date.parse(d.now)))) fail('now must be an ISO date');
  },
  'transcriptions.sweep': (d, fail) => {
    if (d.now !== undefined && (typeof d.now !== 'string' || Number.isNaN(Date.parse(d.now)))) fail('now must be an ISO date');
  },
  'asset.process': (d, fail) => {
    if (typeof d.assetId !== 'string' || !d.assetId.startsWith('ast_')) fail('assetId must be an asset id');
  },
  'transcription.run': (d, fail) => {
    if (typeof d.transcriptionId !== 'string' || !d.transcriptionId.startsWith('trs_')) fail('transcriptionId must be a transcription id');
  },
  'campaign.send': (d, fail) => {
    if (typeof d.campaignId !== 'string' || !d.campaignId.startsWith('cmp_')) fail('campaignId must be a campaign id');
    if (typeof d.workspaceId !== 'string' || !d.workspaceId.startsWith('org_')) fail('workspaceId must be a workspace id');
    if (!Number.isInteger(d.runner) || (d.runner as number) < 0) fail('runner must be a non-negative integer');
  },
  'webhooks.dispatch': () => undefined,
  'webhooks.deliver-event': (d, fail) => {
    if (typeof d.eventId !== 'string' || !d.eventId.startsWith('evt_')) fail('eventId must be an event id');
    if (!Array.isArray(d.deliveryIds) || d.deliveryIds.length === 0 || !d.deliveryIds.every((id) => typeof id === 'string' && id.startsWith('dlv_'))) {
      fail('deliveryIds must be a non-empty list of delivery ids');
    }
  },
  'webhooks.deliver': (d, fail) => {
    if (typeof d.deliveryId !== 'string' || !d.deliveryId.startsWith('dlv_')) fail('deliveryId must be a delivery id');
    if (d.after !== undefined && (!Number.isInteger(d.after) || (d.after as number) < 0)) fail('after must be a non-negative integer');
  },
  'video.render': renderId,
  'video.chunk': (d, fail) => {
    chunkToken(d, fail);
    for (const k of ['index', 'from', 'to', 'totalFrames']) if (!Number.isInteger(d[k]) || (d[k] as number) < 0) fail(`${k} must be a non-negative integer`);
    if ((d.to as number) < (d.from as number)) fail('to must not be before from');
  },
  'video.combine': chunkToken,
  'workflow.row': (d, fail) => {
    runId(d, fail);
    if (typeof d.rowId !== 'string' || !d.rowId.startsWith('wrw_')) fail('rowId must be a workflow row id');
  },
  'workflow.run': runId,
  'still.render': (d, fail) => {
    const edit = d.edit as Record<string, unknown> | null;
    if (typeof edit !== 'object' || edit === null || typeof edit.timeline !== 'object' || typeof edit.output !== 'object') fail('edit must be an edit spec');
    if (typeof d.key !== 'string' || !d.key) fail('key must be a storage key');
    if (typeof d.scale !== 'number' || d.scale < 1 || d.scale > 3) fail('scale must be a number from 1 to 3');
    if (typeof d.watermark !== 'boolean') fail('watermark must be a boolean');
    if (d.renderId !== undefined) renderId(d, fail);
    if (d.aspectRules !== undefined && !Array.isArray(d.aspectRules)) fail('aspectRules must be a list');
  },
};

/** Checks a payload's shape when it is enqueued (JobQueues.add) and again when a worker takes it. */
export function validatePayload<N extends JobName>(name: N, data: unknown): JobPayloads[N] {
  const fail = (why: string): never => {
    throw new Error(`Invalid payload for ${name}: ${why}`);
  };
  const check = Object.hasOwn(CHECKS, name) ? CHECKS[name] : undefined;
  if (!check) return fail('unknown job');
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return fail('not an object');
  check(data as Record<string, unknown>, fail);
  const { requestId } = data as { requestId?: unknown };
  if (requestId !== undefined && (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))) fail('requestId must be a request id');
  return data as JobPayloads[N];
}

export function queueOf(name: JobName): QueueName {
  for (const [queue, jobs] of Object.entries(QUEUES)) if ((jobs as readonly string[]).includes(name)) return queue as QueueName;
  throw new Error(`No queue carries ${name}`);
}
