import { Migration } from '@mikro-orm/migrations';

export class Migration20261125150433 extends Migration {

  override name = 'Migration20261125150433';

  override up(): void | Promise<void> {
    this.addSql(`alter table "template" rename column "preview_url" to "preview_key";`);
    // Previews were stored as URLs (`…/library/previews/<template id>.jpg`, presigned with S3): keep the key.
    this.addSql(`update "template" set "preview_key" = substring("preview_key" from 'library/previews/[^?#]+') where "preview_key" is not null;`);
  }

  // Back to the column's old name; its values stay keys (URLs need the deployment's storage settings).
  override down(): void | Promise<void> {
    this.addSql(`alter table "template" rename column "preview_key" to "preview_url";`);
  }

}
