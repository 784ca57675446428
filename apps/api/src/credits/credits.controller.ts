import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CursorCodec, cursorPage, ok, parseListQuery, type ListSpec } from '#libs/core';
import { CREDIT_KINDS, CreditsService, LEDGER_REASONS } from '#libs/credits';
import { ApiEnvelope, ApiErrors, ApiListQuery, Session } from '../http/decorators.js';
import { CreditsBalanceDto, LedgerEntryDto } from './credits.dto.js';
import { SessionUser, type SessionPrincipal } from '../http/principal.js';

const HISTORY: ListSpec = {
  cursor: true,
  sort: ['id'],
  defaultSort: 'id',
  sets: { kind: CREDIT_KINDS, reason: LEDGER_REASONS },
  dates: ['created'],
};

@ApiTags('credits')
@Controller('credits')
export class CreditsController {
  constructor(
    private readonly credits: CreditsService,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @Session()
  @ApiOperation({ summary: 'Current credit balance (§2)' })
  @ApiEnvelope(CreditsBalanceDto)
  async balance(@SessionUser() s: SessionPrincipal) {
    return ok(await this.credits.balance(s.workspaceId, s.plan.code));
  }

  @Get('history')
  @Session()
  @ApiOperation({ summary: 'Credit ledger, newest first (cursor list)' })
  @ApiListQuery(HISTORY)
  @ApiEnvelope(LedgerEntryDto, { isArray: true, paged: 'cursor' })
  @ApiErrors('INVALID_LIST_QUERY')
  async history(@SessionUser() s: SessionPrincipal, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(HISTORY, raw);
    const scope = JSON.stringify(['credits.history', s.workspaceId, q.sets, q.dates, q.limit]);
    const before = q.pageToken ? this.cursors.decode<{ id: string }>(scope, q.pageToken).id : undefined;
    const page = await this.credits.history(s.workspaceId, {
      limit: q.limit, kinds: q.sets.kind, reasons: q.sets.reason, from: q.dates.created?.from, to: q.dates.created?.to, beforeId: before,
    });
    const last = page.rows.at(-1);
    return cursorPage(
      page.rows.map((e) => ({
        id: e.id, kind: e.kind, reason: e.reason, amount: e.amount, credits: e.credits, renderId: e.renderId ?? undefined,
        balanceAfter: e.balanceAfter, createdAt: e.createdAt.toISOString(),
      })),
      page.more && last ? this.cursors.encode(scope, { id: last.id }) : null,
    );
  }
}
