// A signaling server's URL and room, the RTC configuration, a host and the client's options.
declare const url: string;
declare const room: string;
declare const rtc: import('@netplay/transport-webrtc').RtcSetup;
declare const host: import('@netplay/session').NetplayHost;
declare const clientOptions: import('@netplay/session').NetplayClientOptions;
