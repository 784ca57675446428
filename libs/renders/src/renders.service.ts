import { type EntityManager, type FilterQuery, type MikroORM } from '@mikro-orm/core';
import { Logger } from '@nestjs/common';
import type { QueueEvents } from 'bullmq';
import { addLogContext, ApiError, assertModeMayAct, dependencyUnavailable, newId, orderBy, validationFailed, type KeyMode, type ListQuery } from '#libs/core';
import type { Plan } from '#libs/workspaces';
import type { CreditsService } from '#libs/credits';
import { aliasTarget, applyMerge, assertEdit, assertTiming, autoLengthSources, outputFps, outputKind, outputSize, RESOLUTION_SHORT_SIDE, type EditSpec, type JsonValue, type Timing } from '#libs/edit-spec';
import type { DurationSource } from '#libs/media';
import { isWorkerLost, STILL_TIMEOUT_MS, type JobQueues, type TypedJob } from '#libs/queue';
import { isRedisUnavailable } from '#libs/redis';
import { outputKey, type StorageDriver } from '#libs/storage';
import { allWorkspaces, forWorkspace } from '#libs/db';
import { aspectRules, normaliseValues, validateValues, type TemplatesService } from '#libs/templates';
import { renderEventsOf } from '#libs/events';
import { checkCallbackUrl, eventDeliveries, type EventDelivery } from '#libs/webhooks';
import { checkBudget } from './budget.js';
import { Render, TERMINAL_STATUSES, type RenderStatus } from './entities.js';
import { renderError, renderFailure, STILL_WORKER_LOST } from './errors.js';
import type { RenderLifecycle } from './lifecycle.js';
import { estimate, type Estimate } from './pricing.js';
import { estimateRequest, parseRenderInput, requestHash, type EstimateQuery, type RenderInput, type RenderRequest } from './request.js';

/** One webhook delivery of a render's event (libs/webhooks). */
export type RenderEventDelivery = EventDelivery;

/** A settled still as the answer: done, or its recorded failure thrown. */
function doneOrFailure(row: Render): Render {
  if (row.status !== 'done') throw renderFailure(row);
  return row;
}

/** One of a render's events (GET /v1/render/{id}/events). */
export interface RenderEventView {
  id: string;
  type: string;
  created: string;
  /** The render's mode (issue 28). */
  livemode: boolean;
  deliveries: RenderEventDelivery[];
}

export interface Caller {
  workspaceId: string;
  plan: Plan;
  mode: KeyMode;
}

export interface RendersDeps {
  orm: MikroORM;
  credits: CreditsService;
  /** The one owner of render status changes (shared with the process's other users). */
  lifecycle: RenderLifecycle;
  templates: Pick<TemplatesService, 'findForRender' | 'recordUsage'>;
  storage: StorageDriver;
  /** The queues renders are handed to (still.render, video.render). */
  queues: JobQueues;
  /** Completion events of the stills queue (one listener per process). */
  stillEvents: () => Promise<QueueEvents>;
  /** Outbound URL policy for `callback` (development allows plain HTTP and loopback). */
  env: 'development' | 'production';
  /** Whether a worker with the video engine is running (its heartbeat in Redis). */
  videoAvailable?: () => Promise<boolean>;
  /** Measures media for `length: "auto"` clips of one workspace (range reads + ffprobe); 422 VALIDATION_FAILED over the count limit, MEDIA_UNAVAILABLE naming the clips it cannot. */
  probeDurations?: (workspaceId: string, sources: DurationSource[]) => Promise<Map<string, number>>;
  /** Resolves the media library's assets an edit names (ids or their URLs; libs/assets `AssetRefs`); 422 for any it cannot use. */
  assetRefs?: { resolve(workspaceId: string, edit: JsonValue, root: string): Promise<{ edit: JsonValue; urls: Map<string, string> }> };
  /** 402/409 unless the workspace can transcribe (`alias://` captions; libs/captions CaptionsService.ready). */
  speechReady?: (workspaceId: string, plan: Plan) => Promise<void>;
}

/** The edit with every `length: "auto"` media clip given the length its measured file gave it. */
export function withMeasuredLengths(edit: EditSpec, timing: Timing): EditSpec {
  return {
    ...edit,
    timeline: {
      ...edit.timeline,
      tracks: edit.timeline.tracks.map((track, t) => ({
        ...track,
        clips: track.clips.map((clip, c) => (clip.length === 'auto' ? { ...clip, length: timing.tracks[t]![c]!.length } : clip)),
      })),
    },
  };
}

type AspectRule = { path: string; url: string; aspectRatio: string };

/** §7, §8 plan ceilings of a video, checked before anything is queued or held (duration: after timing). */
export function checkVideoPlan(plan: Plan, edit: EditSpec): void {
  if (!plan.videoEnabled) throw new ApiError('FEATURE_VIDEOENABLED', `Video rendering is not part of the ${plan.name} plan`);
  const size = outputSize(edit.output);
  const short = Math.min(size.width, size.height);
  const ceiling = RESOLUTION_SHORT_SIDE[plan.maxVideoResolution];
  if (short > ceiling) {
    throw new ApiError('LIMIT_VIDEO_RESOLUTION', `A ${size.width}×${size.height} video is above the ${plan.name} plan's ${plan.maxVideoResolution} (${ceiling} px short side)`);
  }
  if (edit.output.codec === 'h265' && !plan.h265Enabled) {
    throw new ApiError('LIMIT_VIDEO_RESOLUTION', `h265 output is not part of the ${plan.name} plan; use h264`);
  }
  const fps = outputFps(edit.output);
  if (fps > plan.maxVideoFps) throw new ApiError('LIMIT_VIDEO_FPS', `${fps} fps is above the ${plan.name} plan's ${plan.maxVideoFps} fps`);
}

/** A render request resolved to the edit it will draw. */
interface Planned {
  input: RenderInput;
  edit: EditSpec;
  templateId: string | null;
  templateVersion: number | null;
  estimate: Estimate;
  /** Template image fields with an aspect ratio, checked by the worker on the downloaded pictures. */
  aspectRules: AspectRule[];
}

export interface CreateResult {
  render: Render;
  /** True when an earlier request with the same idempotency key made this render. */
  replayed: boolean;
  /** Milliseconds per step, for the Server-Timing header. */
  timing?: Record<string, number>;
}

/**
 * Renders (§2 Render, §3 Render status, §4.1): accepting, idempotency (§1.4), credits, the
 * synchronous still path through the worker's stills queue, reads and lists. Every query names the
 * workspace.
 */
export class RendersService {
  readonly lifecycle: RenderLifecycle;
  private readonly logger = new Logger('renders');

  constructor(private readonly deps: RendersDeps) {
    this.lifecycle = deps.lifecycle;
  }

  // --- accepting a render ------------------------------------------------------------------------

  /** Resolves template or edit, values and output overrides to a validated edit and its cost. */
  async plan(caller: Caller, input: RenderInput): Promise<Planned> {
    const values = normaliseValues(input.valueForms);
    let raw: JsonValue;
    let templateId: string | null = null;
    let templateVersion: number | null = null;
    let root = 'edit';
    let rules: AspectRule[] = [];
    if (input.templateId !== undefined) {
      const found = await this.deps.templates.findForRender(caller.workspaceId, input.templateId, { preview: input.preview });
      const checked = validateValues({ fields: found.fields }, values, { root: 'values' });
      rules = aspectRules({ fields: found.fields }, checked).map(({ path, url, aspectRatio }) => ({ path, url, aspectRatio }));
      raw = applyMerge(found.edit as JsonValue, checked).value;
      templateId = found.template.id;
      templateVersion = found.template.version;
      root = 'template.edit';
    } else {
      raw = applyMerge(input.edit as JsonValue, values as Record<string, JsonValue>).value;
    }
    if (this.deps.assetRefs) {
      const resolved = await this.deps.assetRefs.resolve(caller.workspaceId, raw, root);
      raw = resolved.edit;
      rules = rules.map((r) => ({ ...r, url: resolved.urls.get(r.url) ?? r.url }));
    }
    const spec = raw as Record<string, JsonValue>;
    const output = { ...(spec.output as Record<string, JsonValue> | undefined), ...(input.output as Record<string, JsonValue> | undefined) };
    if (input.overrides.format) output.format = input.overrides.format;
    if (input.overrides.resolution) {
      output.resolution = input.overrides.resolution;
      delete output.size;
    }
    if (input.overrides.fps !== undefined) output.fps = input.overrides.fps;
    let edit = assertEdit({ ...spec, output }, { root });
    if (input.draft && outputKind(edit.output.format) === 'video') edit = assertEdit({ ...spec, output: draftOutput(edit.output) }, { root });
    const kind = outputKind(edit.output.format);
    if (input.preview && kind !== 'image' && !input.draft) {
      // The designer's unsaved edit (issue 29) is named by its output's format; a saved template by its id.
      const at = input.templateId !== undefined ? 'templateId' : 'edit.output.format';
      throw validationFailed({ [at]: [`is a video ${at === 'templateId' ? 'template' : 'format'} (${edit.output.format}); a preview is a still: render it to see it`] }, 'Previews are stills (png, jpeg, pdf)');
    }
    if (input.binary && kind !== 'image') throw validationFailed({ 'query.format': ['binary is for png, jpeg and pdf'] }, 'format=binary returns still images only; poll the render for a video');
    if (kind === 'video') {
      checkVideoPlan(caller.plan, edit);
      if (!this.deps.videoAvailable || !(await this.deps.videoAvailable())) {
        throw new ApiError('ENGINE_NOT_CONFIGURED', 'Video rendering is unavailable on this deployment: no worker runs the video engine');
      }
    }
    // `alias://` captions are transcribed by the worker with the workspace's speech provider: one must
    // be connected before anything is held (409 INTEGRATION_NOT_CONNECTED).
    if (kind === 'video' && edit.timeline.tracks.some((t) => t.clips.some((c) => c.asset.type === 'caption' && aliasTarget(c.asset.src) !== undefined))) {
      if (!this.deps.speechReady) throw new ApiError('UNSUPPORTED_ASSET', 'Captions transcribed from a clip (alias://) need a speech provider, which this deployment does not have');
      await this.deps.speechReady(caller.workspaceId, caller.plan);
    }
    // `length: "auto"` of video, audio and luma clips: the files are measured now, so that the
    // duration ceiling and the price hold, and the lengths are written into the stored edit, so the
    // worker plays exactly what was checked and billed (decisions.md "auto media lengths").
    const sources = autoLengthSources(edit, root);
    let durations: Map<string, number> | undefined;
    if (sources.length) {
      if (!this.deps.probeDurations) throw new ApiError('UNSUPPORTED_ASSET', 'Clips with `length: "auto"` of media cannot be measured on this deployment', { errors: Object.fromEntries(sources.map((s) => [s.path.replace(/\.asset\.src$/, '.length'), ['give the length in seconds']])) });
      durations = await this.deps.probeDurations(caller.workspaceId, sources);
    }
    const timing = assertTiming(edit, durations ? { root, durations } : { root });
    if (durations) edit = withMeasuredLengths(edit, timing);
    if (kind === 'video' && timing.window.length > caller.plan.maxVideoDurationSec) {
      throw new ApiError('LIMIT_VIDEO_DURATION', `The edit lasts ${timing.window.length} s; the ${caller.plan.name} plan renders up to ${caller.plan.maxVideoDurationSec} s`);
    }
    const cost = estimate(edit, timing, input.scale);
    if (Math.max(cost.size.width, cost.size.height) > caller.plan.maxImageDimension) {
      throw new ApiError('LIMIT_IMAGE_SIZE', `A ${cost.size.width}×${cost.size.height} still is larger than the ${caller.plan.name} plan allows (${caller.plan.maxImageDimension} px a side)`);
    }
    checkBudget(edit, timing, caller.plan, { scale: input.scale, root });
    return { input, edit, templateId, templateVersion, estimate: cost, aspectRules: rules };
  }

  /** §4.1 Estimate cost: the same resolution and checks as a render, nothing stored or held. */
  async estimate(caller: Caller, request: RenderRequest): Promise<Estimate> {
    return (await this.plan(caller, parseRenderInput(request))).estimate;
  }

  /** GET /v1/render/estimate: a template named in the query, or the output the query describes (`estimateRequest`). */
  async estimateQuery(caller: Caller, query: EstimateQuery): Promise<Estimate> {
    return this.estimate(caller, estimateRequest(query));
  }

  /**
   * POST /v1/render for a still: claims the idempotency key, creates the render and holds its credit
   * in one transaction, has a worker draw it, and settles it (capture or release) with its event.
   */
  async create(caller: Caller, request: RenderRequest): Promise<CreateResult> {
    const arrived = performance.now();
    const input = parseRenderInput(request);
    const hash = requestHash(request.sent ?? request);
    if (input.idempotencyKey !== undefined) {
      const prior = await this.lifecycle.replayed(caller.workspaceId, input.idempotencyKey, hash);
      if (prior) return { render: prior, replayed: true };
    }
    if (input.callback !== undefined) checkCallbackUrl(input.callback, this.deps.env, 'callback');
    const t0 = performance.now();
    const planned = await this.plan(caller, input);
    await this.deps.credits.ensureOpen(caller.workspaceId, caller.plan.code);
    const t1 = performance.now();

    const video = planned.estimate.kind === 'video';
    const watermarked = caller.mode === 'test' || caller.plan.watermark;
    const id = newId('render');
    addLogContext({ renderId: id });
    const credits = caller.mode === 'test' ? 0 : planned.estimate.credits;
    const now = new Date();
    const row = {
      id, workspaceId: caller.workspaceId, status: video ? 'queued' : 'rendering', kind: planned.estimate.kind, mode: caller.mode,
      templateId: planned.templateId, templateVersion: planned.templateVersion, format: planned.edit.output.format,
      width: planned.estimate.size.width, height: planned.estimate.size.height, duration: video ? planned.estimate.durationSec : null,
      fps: video ? planned.estimate.breakdown.fps : null, scale: input.scale,
      fileSizeBytes: null, renderTime: null, credits, watermarked, outputKey: null, posterKey: null, thumbnailKey: null,
      expiresAt: null, purgedAt: null, error: null, progress: 0, cancelRequested: false, metadata: input.metadata ?? null,
      callback: input.preview ? null : (input.callback ?? planned.edit.callback ?? null), edit: planned.edit as unknown as Record<string, unknown>,
      idempotencyKey: input.idempotencyKey ?? null, requestHash: input.idempotencyKey ? hash : null, attempts: 1,
      createdAt: now, updatedAt: now, startedAt: video ? null : now, completedAt: null, preview: input.preview,
    } satisfies Render as Render;
    const hold = credits > 0 ? { plan: caller.plan.code, kind: planned.estimate.kind, amount: credits, mode: caller.mode } : null;
    // A preview is not a use of the template (nor anything else of the workspace's history).
    const templateId = input.preview ? null : planned.templateId;
    // A video waits in the queue: its claim counts the queue depth (§8) in the same step as the insert.
    const claimed = await this.lifecycle.claim(row, hold, templateId ? (em) => this.deps.templates.recordUsage(templateId, em as EntityManager) : undefined,
      video ? { max: caller.plan.queueDepth, planName: caller.plan.name } : undefined);
    if (claimed.replayed) return claimed;
    this.logger.log(`render ${id} accepted: ${row.kind} ${row.format} ${row.width}×${row.height}, ${credits} credit(s), ${caller.mode}`);
    const render = claimed.render;
    if (video) return { render: await this.enqueueVideo(render), replayed: false };
    const t2 = performance.now();
    const timing: Record<string, number> = { parse: t0 - arrived, plan: t1 - t0, claim: t2 - t1 };
    return { render: await this.drawStill(render, planned.edit, planned.aspectRules, timing), replayed: false, timing };
  }

  /** Hands a queued video to the workers; a queue that refuses it fails the render (`notQueued`). */
  private async enqueueVideo(render: Render): Promise<Render> {
    try {
      await this.deps.queues.add('video.render', { renderId: render.id }, { jobId: render.id });
      return render;
    } catch (err) {
      return this.notQueued(render, err);
    }
  }

  /**
   * A render whose job could not be added: settled failed (credits released, idempotency key freed
   * for the retry), never left without its job. Redis gone: 503 DEPENDENCY_UNAVAILABLE (Retry-After);
   * otherwise the render's recorded error.
   */
  private async notQueued(render: Render, err: unknown): Promise<never> {
    this.logger.warn(`${render.kind === 'video' ? 'video' : 'still'} ${render.id} could not be queued: ${(err as Error).message}`);
    const down = isRedisUnavailable(err);
    const failed = await this.lifecycle.notQueued(render.id, down
      ? { code: 'DEPENDENCY_UNAVAILABLE', message: 'The job queue was unavailable; the credits were released', stage: 'queued' }
      : renderError(err, 'queued', 'The render could not be queued; the credits were released'));
    throw down ? dependencyUnavailable('redis') : renderFailure(failed);
  }

  private async drawStill(render: Render, edit: EditSpec, rules: AspectRule[], timing: Record<string, number>): Promise<Render> {
    const ext = render.format === 'jpeg' ? 'jpg' : render.format;
    const enqueue = performance.now();
    let job: TypedJob<'still.render'>;
    let events: QueueEvents;
    try {
      events = await this.deps.stillEvents();
      job = await this.deps.queues.add(
        'still.render',
        { edit: edit as never, key: outputKey(render.id, ext), scale: render.scale, watermark: render.watermarked, renderId: render.id, aspectRules: rules },
        { jobId: render.id },
      );
    } catch (err) {
      return this.notQueued(render, err);
    }
    try {
      const queued = performance.now();
      timing.enqueue = queued - enqueue;
      const result = await job.waitUntilFinished(events, STILL_TIMEOUT_MS);
      const worker = result.ok && result.timings ? result.timings : undefined;
      if (worker) Object.assign(timing, worker, { queue: performance.now() - queued - worker.draw - worker.store - (worker.settle ?? 0) });
    } catch (err) {
      // No answer in time (504; the worker may still finish, but the caller has given up on it: the
      // render fails and its credit is released), or the job itself failed (the worker settled it).
      const timedOut = /timed out|timeout/i.test((err as Error).message);
      this.logger.warn(`still ${render.id} failed in the worker: ${(err as Error).message}`);
      if (timedOut) {
        const failed = await this.lifecycle.fail(render.id, { code: 'RENDER_TIMEOUT', message: `The still was not drawn within ${STILL_TIMEOUT_MS / 1000} s`, stage: 'rendering' });
        if (failed.status === 'failed') throw renderFailure(failed);
      }
      // Its worker died (the job is not run again): settled WORKER_LOST here or by the worker that
      // found it stalled, whichever comes first (once).
      // A worker declared lost may have finished it in between (its lock lapsed while it drew): done stays done.
      if (isWorkerLost(err as Error)) return doneOrFailure(await this.lifecycle.lost(render.id, STILL_WORKER_LOST, 'rendering'));
    }
    // The worker settled the render (done or failed) with its credits and event: read the record.
    const read = performance.now();
    const settled = await this.lifecycle.get(render.id);
    timing.read = performance.now() - read;
    if (!settled || !TERMINAL_STATUSES.includes(settled.status)) return doneOrFailure(await this.lifecycle.fail(render.id, renderError(undefined, 'rendering')));
    return doneOrFailure(settled);
  }

  // --- cancel ------------------------------------------------------------------------------------

  /**
   * §3 cancel: a queued render is cancelled at once (credits released, `render.cancelled`); a working
   * one is flagged `cancelRequested` and settled by its worker; a settled one is 409 ALREADY_SETTLED.
   * A test caller cancels only test renders (403 LIVE_MODE_REQUIRED; a render's mode never changes).
   */
  async cancel(workspaceId: string, callerMode: KeyMode, id: string): Promise<{ render: Render; immediate: boolean }> {
    assertModeMayAct(callerMode, (await this.get(workspaceId, id)).mode, 'render');
    return this.lifecycle.cancel(workspaceId, id);
  }

  // --- reads -------------------------------------------------------------------------------------

  async get(workspaceId: string, id: string): Promise<Render> {
    const row = await forWorkspace(this.deps.orm, workspaceId).findOne(Render, { id });
    if (!row) throw new ApiError('RENDER_NOT_FOUND', `Render ${id} does not exist`);
    return row;
  }

  /** The normalised edit the render was made from, as a POST /v1/render body (GET /v1/render/{id}/edit). */
  async edit(workspaceId: string, id: string): Promise<{ edit: Record<string, unknown> }> {
    return { edit: (await this.get(workspaceId, id)).edit };
  }

  /**
   * The render's events, oldest first, each with its webhook deliveries (GET /v1/render/{id}/events):
   * two indexed reads after the render's, whatever the workspace's history.
   */
  async events(workspaceId: string, id: string): Promise<RenderEventView[]> {
    const render = await this.get(workspaceId, id);
    const em = forWorkspace(this.deps.orm, workspaceId);
    const events = await renderEventsOf(em, render.id, render.createdAt);
    const deliveries = await eventDeliveries(em, events.map((e) => e.id!));
    return events.map((e) => ({ id: e.id!, type: e.type, created: e.created, livemode: e.livemode, deliveries: deliveries.get(e.id!) ?? [] }));
  }

  /** The workspace's renders, without the dashboard's previews (read by id only). */
  async list(workspaceId: string, q: ListQuery): Promise<{ rows: Render[]; total: number }> {
    const where: FilterQuery<Render> = { preview: false };
    if (q.sets.status) where.status = { $in: q.sets.status as RenderStatus[] };
    if (q.sets.kind) where.kind = { $in: q.sets.kind as Render['kind'][] };
    if (q.sets.templateId) where.templateId = { $in: q.sets.templateId };
    for (const [name, column] of [['created', 'createdAt'], ['completed', 'completedAt']] as const) {
      const range = q.dates[name];
      if (range) (where as Record<string, unknown>)[column] = { ...(range.from ? { $gte: range.from } : {}), ...(range.to ? { $lte: range.to } : {}) };
    }
    const [rows, total] = await forWorkspace(this.deps.orm, workspaceId).findAndCount(Render, where, { orderBy: orderBy(q) as never, limit: q.limit, offset: q.offset });
    return { rows, total };
  }

  /**
   * The bytes of a done still (format=binary): read whole into memory up to 64 MiB (the response is
   * then written at once: streaming a 2 MB frame in 64 KB chunks cost ~10–20 ms), streamed beyond.
   */
  async output(render: Render): Promise<{ body: Buffer | NodeJS.ReadableStream; contentType: string; sizeBytes: number }> {
    if (!render.outputKey || render.purgedAt) throw new ApiError('RENDER_NOT_FOUND', `Render ${render.id} has no output (expired or not done)`);
    const stat = await this.deps.storage.stat(render.outputKey);
    if (!stat) throw new ApiError('RENDER_NOT_FOUND', `Render ${render.id}'s output is gone`);
    const whole = stat.sizeBytes <= 64 * 1024 * 1024;
    // Gathered whole: one read of a local file instead of one per 64 KiB (a 1 MB PNG: 16).
    const stream = await this.deps.storage.read(render.outputKey, undefined, whole ? { chunkBytes: Math.max(stat.sizeBytes, 1) } : {});
    if (!whole) return { body: stream, contentType: stat.contentType, sizeBytes: stat.sizeBytes };
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { body: Buffer.concat(chunks), contentType: stat.contentType, sizeBytes: stat.sizeBytes };
  }

  // --- views -------------------------------------------------------------------------------------

  /** The render record (§2 Render + decisions.md "Render record"). */
  view(row: Render): Record<string, unknown> {
    return {
      ...this.lifecycle.eventData(row),
      mode: row.mode,
      preview: row.preview,
      templateVersion: row.templateVersion,
      expiresAt: row.expiresAt?.toISOString() ?? null,
      error: row.error ?? null,
      progress: row.progress,
      cancelRequested: row.cancelRequested,
      metadata: row.metadata,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      startedAt: row.startedAt?.toISOString() ?? null,
      completedAt: row.completedAt?.toISOString() ?? null,
    };
  }

  /** Ids of the given renders that are settled (the credit sweeper's check). */
  async settled(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    // The credit sweeper's check runs across workspaces.
    const rows = await allWorkspaces(this.deps.orm).find(Render, { id: { $in: ids }, status: { $in: [...TERMINAL_STATUSES] } }, { fields: ['id'] });
    return new Set(rows.map((r) => r.id));
  }
}

/** The long side and the frame rate of a draft video (issue 29): enough to judge motion and timing, cheap to draw. */
export const DRAFT_SIDE = 320;
export const DRAFT_FPS = 12;

/** `output` as a draft: its size scaled to DRAFT_SIDE on the long side (even sides), DRAFT_FPS, low quality, no thumbnail. */
function draftOutput(output: EditSpec['output']): Record<string, JsonValue> {
  const size = outputSize(output);
  const k = Math.min(1, DRAFT_SIDE / Math.max(size.width, size.height));
  const even = (n: number) => Math.max(2, 2 * Math.round((n * k) / 2));
  return { format: output.format, size: { width: even(size.width), height: even(size.height) }, fps: DRAFT_FPS, quality: 'low' };
}
