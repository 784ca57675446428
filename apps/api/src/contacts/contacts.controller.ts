import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ok } from '#libs/core';
import type { UsableConnection } from '#libs/integrations';
import { ContactsService, DEFAULT_CONTACTS_LIMIT } from '#libs/suite';
import { ApiEnvelope, ApiErrors, Integration, Scopes } from '../http/decorators.js';
import { Connection } from '../http/principal.js';
import { ContactLabelDto, ContactsPageDto, ReadContactsQueryDto } from './contacts.dto.js';

/** §4.5 the workspace-suite contacts rows (docs/suite.md): Google People v1. */
@ApiTags('contacts')
@Controller('v1/integrations/workspace-suite/contacts')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @Get()
  @Scopes('integrations:read')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'The connected account\'s contacts (a cursor: nextPageToken), or a search by name, email or phone' })
  @ApiEnvelope(ContactsPageDto)
  @ApiErrors('VALIDATION_FAILED', 'PROVIDER_UNAVAILABLE', 'PROVIDER_ERROR')
  async read(@Connection() use: UsableConnection, @Query() q: ReadContactsQueryDto) {
    return ok(await this.contacts.read(use, { search: q.search?.trim() || null, limit: q.limit ?? DEFAULT_CONTACTS_LIMIT, pageToken: q.pageToken ?? null }));
  }

  @Get('groups')
  @Scopes('integrations:read')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'The account\'s contact labels (People contact groups) with their member counts' })
  @ApiEnvelope(ContactLabelDto, { isArray: true, paged: false })
  @ApiErrors('PROVIDER_UNAVAILABLE', 'PROVIDER_ERROR')
  async labels(@Connection() use: UsableConnection) {
    return ok(await this.contacts.labels(use));
  }
}
