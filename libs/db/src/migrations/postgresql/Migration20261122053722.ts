import { Migration } from '@mikro-orm/migrations';

export class Migration20261122053722 extends Migration {

  override name = 'Migration20261122053722';

  override up(): void | Promise<void> {
    this.addSql(`create table "template" ("id" varchar(40) not null, "workspace_id" varchar(32) null, "name" varchar(120) not null, "description" text null, "kind" varchar(5) not null, "width" int not null, "height" int not null, "aspect_ratio" varchar(16) not null, "edit" jsonb not null, "fields" jsonb not null, "field_groups" jsonb not null, "version" int not null, "status" varchar(9) not null, "visibility" varchar(7) not null, "category_id" varchar(40) null, "subcategory_id" varchar(40) null, "tags" jsonb not null, "search_text" text not null, "usage_count" int not null, "preview_url" text null, "source_template_id" varchar(40) null, "review" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "published_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "template_workspace_id_status_index" on "template" ("workspace_id", "status");`);
    this.addSql(`create index "template_visibility_status_index" on "template" ("visibility", "status");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "template" cascade;`);
  }

}
