// The application's renderer.
declare function draw(data: Uint8Array, width: number, height: number, pitch: number, format: string): void;
