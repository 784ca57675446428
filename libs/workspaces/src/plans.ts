import type { MikroORM } from '@mikro-orm/core';
import { Logger } from '@nestjs/common';
import type { KeyMode } from '#libs/core';
import { queries, type Tables } from '#libs/db';
import type { Workspace } from './workspace.entity.js';

/** Every ceiling the contract names, per plan (contract §8; decisions.md "Plans"). */
export interface Plan {
  code: PlanCode;
  name: string;
  /** Key-authenticated requests per workspace per minute (live keys; test keys get half). */
  ratePerMinute: number;
  apiRequestsPerMonth: number;
  /** Renders running at once; the rest wait in the queue (never an error). */
  concurrentRenders: number;
  /** Renders waiting in the queue at once; beyond it 402 LIMIT_QUEUE_DEPTH. */
  queueDepth: number;
  videoEnabled: boolean;
  maxVideoDurationSec: number;
  /** Largest video resolution preset allowed. */
  maxVideoResolution: VideoResolution;
  maxVideoFps: number;
  h265Enabled: boolean;
  /** Largest still-image side in pixels (after scale). */
  maxImageDimension: number;
  /**
   * Output pixels × frames of one video (the render budget, docs/decisions.md "Hostile input (issue 27):
   * budget"): the plan's largest 16:9 video at its top frame rate for its longest duration, so that
   * every video within the other ceilings passes and an output stretched far past 16:9 does not.
   */
  maxVideoPixelFrames: number;
  workflowsEnabled: boolean;
  workflowRunsPerMonth: number;
  workflowMaxSteps: number;
  webhookDeliveriesPerMonth: number;
  templateCount: number;
  storageBytes: number;
  /** Live keys a workspace may hold at once (test keys do not count). */
  liveKeyQuota: number;
  imageCreditsPerMonth: number;
  videoCreditsPerMonth: number;
  /** Live renders watermarked on this plan (test renders always are). */
  watermark: boolean;
  integrationsEnabled: boolean;
}

export const PLAN_CODES = ['free', 'starter', 'pro', 'business', 'enterprise'] as const;
export type PlanCode = (typeof PLAN_CODES)[number];

export const VIDEO_RESOLUTIONS = ['preview', 'mobile', 'sd', 'hd', 'fhd', '4k'] as const;
export type VideoResolution = (typeof VIDEO_RESOLUTIONS)[number];

const GB = 1024 ** 3;

export const PLANS: Readonly<Record<PlanCode, Plan>> = {
  free: {
    code: 'free', name: 'Free', ratePerMinute: 20, apiRequestsPerMonth: 10_000, concurrentRenders: 1, queueDepth: 5,
    videoEnabled: true, maxVideoDurationSec: 30, maxVideoResolution: 'sd', maxVideoFps: 30, h265Enabled: false,
    maxImageDimension: 2048, maxVideoPixelFrames: 1024 * 576 * 30 * 30, workflowsEnabled: false, workflowRunsPerMonth: 0, workflowMaxSteps: 0,
    webhookDeliveriesPerMonth: 1_000, templateCount: 10, storageBytes: 1 * GB, liveKeyQuota: 2,
    imageCreditsPerMonth: 50, videoCreditsPerMonth: 5, watermark: true, integrationsEnabled: false,
  },
  starter: {
    code: 'starter', name: 'Starter', ratePerMinute: 60, apiRequestsPerMonth: 100_000, concurrentRenders: 2, queueDepth: 20,
    videoEnabled: true, maxVideoDurationSec: 120, maxVideoResolution: 'hd', maxVideoFps: 30, h265Enabled: false,
    maxImageDimension: 4096, maxVideoPixelFrames: 1280 * 720 * 30 * 120, workflowsEnabled: false, workflowRunsPerMonth: 0, workflowMaxSteps: 0,
    webhookDeliveriesPerMonth: 10_000, templateCount: 50, storageBytes: 10 * GB, liveKeyQuota: 5,
    imageCreditsPerMonth: 1_000, videoCreditsPerMonth: 50, watermark: false, integrationsEnabled: true,
  },
  pro: {
    code: 'pro', name: 'Pro', ratePerMinute: 300, apiRequestsPerMonth: 1_000_000, concurrentRenders: 5, queueDepth: 100,
    videoEnabled: true, maxVideoDurationSec: 600, maxVideoResolution: 'fhd', maxVideoFps: 60, h265Enabled: true,
    maxImageDimension: 8192, maxVideoPixelFrames: 1920 * 1080 * 60 * 600, workflowsEnabled: true, workflowRunsPerMonth: 10_000, workflowMaxSteps: 20,
    webhookDeliveriesPerMonth: 100_000, templateCount: 500, storageBytes: 100 * GB, liveKeyQuota: 20,
    imageCreditsPerMonth: 10_000, videoCreditsPerMonth: 500, watermark: false, integrationsEnabled: true,
  },
  business: {
    code: 'business', name: 'Business', ratePerMinute: 600, apiRequestsPerMonth: 5_000_000, concurrentRenders: 10, queueDepth: 500,
    videoEnabled: true, maxVideoDurationSec: 1_800, maxVideoResolution: '4k', maxVideoFps: 60, h265Enabled: true,
    maxImageDimension: 8192, maxVideoPixelFrames: 3840 * 2160 * 60 * 1_800, workflowsEnabled: true, workflowRunsPerMonth: 100_000, workflowMaxSteps: 50,
    webhookDeliveriesPerMonth: 1_000_000, templateCount: 5_000, storageBytes: 1_000 * GB, liveKeyQuota: 50,
    imageCreditsPerMonth: 50_000, videoCreditsPerMonth: 2_500, watermark: false, integrationsEnabled: true,
  },
  enterprise: {
    code: 'enterprise', name: 'Enterprise', ratePerMinute: 1_200, apiRequestsPerMonth: 50_000_000, concurrentRenders: 25, queueDepth: 2_000,
    videoEnabled: true, maxVideoDurationSec: 3_600, maxVideoResolution: '4k', maxVideoFps: 60, h265Enabled: true,
    maxImageDimension: 16_384, maxVideoPixelFrames: 3840 * 2160 * 60 * 3_600, workflowsEnabled: true, workflowRunsPerMonth: 1_000_000, workflowMaxSteps: 200,
    webhookDeliveriesPerMonth: 10_000_000, templateCount: 50_000, storageBytes: 10_000 * GB, liveKeyQuota: 200,
    imageCreditsPerMonth: 250_000, videoCreditsPerMonth: 12_500, watermark: false, integrationsEnabled: true,
  },
};

export function isPlanCode(value: string): value is PlanCode {
  return (PLAN_CODES as readonly string[]).includes(value);
}

/** Requests per minute for a key of `mode` on `plan`: test keys get half (decisions.md). */
export function rateLimitFor(plan: Plan, mode: KeyMode): number {
  return mode === 'test' ? Math.max(1, Math.floor(plan.ratePerMinute / 2)) : plan.ratePerMinute;
}

/** The first instant of the calendar month (UTC) that a plan's monthly allowances count in. */
export function monthStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** Boolean features a route can require; each maps to its 402 FEATURE_* code. */
export const PLAN_FEATURES = {
  videoEnabled: 'FEATURE_VIDEOENABLED',
  workflowsEnabled: 'FEATURE_WORKFLOWSENABLED',
  integrationsEnabled: 'LIMIT_INTEGRATION_NOT_ALLOWED',
} as const;
export type PlanFeature = keyof typeof PLAN_FEATURES;

/*
 * The one place a workspace's plan is read and a stored plan code becomes a Plan
 * (docs/decisions.md "Structure (issue 31): workspace plans").
 */

const log = new Logger('plans');
/** Unknown codes already reported by this process (each is logged once, not once per request). */
const reported = new Set<string>();

/**
 * The plan of a stored code. A code the product does not know (an operator's typo in the database, a
 * plan removed by a later release) is a configuration error: it is logged once per process as an error
 * naming the code, and the workspace gets the free plan, so a typo never grants more than free nor
 * takes the workspace's service down. No code (a workspace gone) is free too, silently.
 */
export function planFor(code: string | null | undefined, workspaceId?: string): Plan {
  if (code === null || code === undefined) return PLANS.free;
  if (isPlanCode(code)) return PLANS[code];
  if (!reported.has(code) && reported.size < 100) {
    reported.add(code);
    log.error(`Unknown plan code "${code}"${workspaceId ? ` (workspace ${workspaceId})` : ''}: treated as free; `
      + `set a known plan (${PLAN_CODES.join(', ')}) with \`workspace:plan\``);
  }
  return PLANS.free;
}

const workspaces = queries<Tables<typeof Workspace>>();
const PLAN_CODE = workspaces.prepare((db, p: { id: string }) => db.selectFrom('workspace').select('plan').where('id', '=', p.id));

/**
 * A workspace's plan, read from its row (one prepared statement). Paths that already hold the
 * workspace row (the key authenticator's cache, sessions) resolve its code with `planFor` instead of
 * reading it again.
 */
export class WorkspacePlans {
  constructor(private readonly orm: MikroORM) {}

  async planOf(workspaceId: string): Promise<Plan> {
    return planFor((await PLAN_CODE.one(this.orm.em, { id: workspaceId }))?.plan, workspaceId);
  }
}
