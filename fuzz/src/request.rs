//! `request`: any body into any work route. The first byte picks the route ([`ROUTES`], by
//! its value modulo their number); the rest is the body, as a client's bytes. Whatever the
//! bytes, the answer is a 2xx or an OpenAI-shaped 4xx (504 past the request timeout), never
//! a panic, a 500 or a 502 (`server::Server::post`).

/// The routes that read a client's body, without the front door's (they need an engine).
pub const ROUTES: &[&str] = &[
    "/v1/chat/completions/render",
    "/v1/messages/render",
    "/v1/responses/render",
    "/v1/completions/render",
    "/tokenize",
    "/detokenize",
    "/v1/block_hashes",
    "/v1/chat/completions/derender",
    "/v1/completions/derender",
    "/v1/messages/derender",
    "/v1/responses/derender",
];

/// The input for `body` at `route` (its selector byte, then the body).
pub fn input(route: &str, body: &[u8]) -> Option<Vec<u8>> {
    let at = ROUTES.iter().position(|r| *r == route)?;
    let mut out = vec![u8::try_from(at).ok()?];
    out.extend_from_slice(body);
    Some(out)
}

pub fn run(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let route = ROUTES[usize::from(selector) % ROUTES.len()];
    crate::server::get().post(route, body.to_vec());
}
