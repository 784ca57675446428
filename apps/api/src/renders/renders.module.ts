import { Module } from '@nestjs/common';
import { RenderEventsController } from './render-events.controller.js';
import { RenderEventStreams } from './render-events.js';
import { TemplatePreviewsController } from './previews.controller.js';
import { RendersController } from './renders.controller.js';
import { ShotstackController, ShotstackStageController } from './shotstack.controller.js';

/** Renders (libs/renders; RendersService and the stills' events come from libs/app's ServicesModule). */
@Module({
  controllers: [RendersController, RenderEventsController, ShotstackController, ShotstackStageController, TemplatePreviewsController],
  providers: [RenderEventStreams],
})
export class RendersModule {}
