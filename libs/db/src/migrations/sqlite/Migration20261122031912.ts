import { Migration } from '@mikro-orm/migrations';

export class Migration20261122031912 extends Migration {

  override name = 'Migration20261122031912';

  override up(): void | Promise<void> {
    this.addSql(`create table \`webhook_attempt\` (\`id\` text not null primary key, \`delivery_id\` text not null, \`attempt\` integer not null, \`status\` integer null, \`error\` text null, \`duration_ms\` integer not null, \`signed_at\` integer not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`webhook_attempt_delivery_id_index\` on \`webhook_attempt\` (\`delivery_id\`);`);
    this.addSql(`create unique index \`webhook_attempt_delivery_id_attempt_unique\` on \`webhook_attempt\` (\`delivery_id\`, \`attempt\`);`);

    this.addSql(`create table \`webhook_delivery\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`endpoint_id\` text not null, \`event_id\` text not null, \`event_type\` text not null, \`sequence\` integer not null, \`test\` integer not null, \`event\` json not null, \`state\` text not null, \`attempts\` integer not null, \`last_status\` integer null, \`last_error\` text null, \`last_duration_ms\` integer null, \`created_at\` datetime not null, \`completed_at\` datetime null);`);
    this.addSql(`create index \`webhook_delivery_endpoint_id_id_index\` on \`webhook_delivery\` (\`endpoint_id\`, \`id\`);`);
    this.addSql(`create unique index \`webhook_delivery_endpoint_id_event_id_sequence_unique\` on \`webhook_delivery\` (\`endpoint_id\`, \`event_id\`, \`sequence\`);`);

    this.addSql(`create table \`webhook_endpoint\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`url\` text not null, \`description\` text null, \`events\` json not null, \`method\` text not null, \`body_format\` text not null, \`payload_mode\` text not null, \`payload_template\` text null, \`headers\` json not null, \`secret_sealed\` text not null, \`secret_hint\` text not null, \`is_active\` integer not null, \`disabled_at\` datetime null, \`consecutive_failures\` integer not null, \`last_success_at\` datetime null, \`last_failure_at\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`webhook_endpoint_workspace_id_index\` on \`webhook_endpoint\` (\`workspace_id\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`webhook_attempt\`;`);
    this.addSql(`drop table if exists \`webhook_delivery\`;`);
    this.addSql(`drop table if exists \`webhook_endpoint\`;`);
  }

}
