// The parts of the untyped `shotstack-sdk` (0.2.x) the Shotstack door's test uses.
declare module 'shotstack-sdk' {
  interface Model { [setter: string]: unknown }
  type Setters<T extends string> = { [K in T]: (value: unknown) => Setters<T> };
  export class ApiClient {
    constructor(basePath?: string);
    basePath: string;
    authentications: { DeveloperKey: { apiKey: string } };
  }
  export class EditApi {
    constructor(client?: ApiClient);
    postRender(edit: unknown): Promise<{ success: boolean; message: string; response: { id: string; message: string } }>;
    getRender(id: string, opts?: { data?: boolean; merged?: boolean }): Promise<{
      success: boolean; message: string;
      response: { id: string; owner: string; plan: string; status: string; error?: string; duration?: number; renderTime?: number; url?: string; poster?: string; thumbnail?: string; data?: Model; created: string; updated: string };
    }>;
  }
  export const TitleAsset: new () => Setters<'setText' | 'setStyle' | 'setColor' | 'setSize' | 'setBackground' | 'setPosition'>;
  export const Clip: new () => Setters<'setAsset' | 'setStart' | 'setLength' | 'setTransition' | 'setEffect'>;
  export const Track: new () => Setters<'setClips'>;
  export const Timeline: new () => Setters<'setBackground' | 'setTracks'>;
  export const Size: new () => Setters<'setWidth' | 'setHeight'>;
  export const Output: new () => Setters<'setFormat' | 'setResolution' | 'setSize' | 'setFps' | 'setPoster' | 'setThumbnail'>;
  export const Poster: new () => Setters<'setCapture'>;
  export const MergeField: new () => Setters<'setFind' | 'setReplace'>;
  export const Edit: new () => Setters<'setTimeline' | 'setOutput' | 'setMerge' | 'setCallback'>;
}
