import { Migration } from '@mikro-orm/migrations';

/** Test mode (issue 28): the mode of events, webhook endpoints, deliveries, assets and transcriptions; rows before it were all live. */
export class Migration20261128010500 extends Migration {

  override name = 'Migration20261128010500';

  override up(): void | Promise<void> {
    this.addSql(`alter table "outbox_event" add "mode" varchar(4) not null default 'live';`);
    this.addSql(`alter table "webhook_endpoint" add "mode" varchar(4) not null default 'live', add "modes" jsonb not null default '["live","test"]';`);
    this.addSql(`alter table "webhook_endpoint" alter column "modes" drop default;`);
    this.addSql(`alter table "webhook_delivery" add "mode" varchar(4) not null default 'live';`);
    this.addSql(`alter table "asset" add "mode" varchar(4) not null default 'live';`);
    this.addSql(`alter table "transcription" add "mode" varchar(4) not null default 'live';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "outbox_event" drop column "mode";`);
    this.addSql(`alter table "webhook_endpoint" drop column "mode", drop column "modes";`);
    this.addSql(`alter table "webhook_delivery" drop column "mode";`);
    this.addSql(`alter table "asset" drop column "mode";`);
    this.addSql(`alter table "transcription" drop column "mode";`);
  }

}
