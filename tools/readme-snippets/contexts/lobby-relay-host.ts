// The room announced in the block above and the host's transport-udp listener.
declare const room: import('@netplay/lobby').Announcement;
declare const udpListener: { readonly port: number };
