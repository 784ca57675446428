import { Module } from '@nestjs/common';
import { OrganizationController } from './organization.controller.js';

@Module({ controllers: [OrganizationController] })
export class OrganizationModule {}
