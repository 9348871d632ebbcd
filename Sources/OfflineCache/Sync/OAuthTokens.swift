import FoundationEssentials
import Synchronization

/// OAuth2 client credentials (RFC 6749 §4.4), or a refresh token (§6): a bearer token asked for once per process and
/// client, kept in memory only, and asked for again when it expires or a request answers 401.
/// Neither the secret nor a token is written anywhere: not the database, not a message.
enum OAuthTokens {
    private struct Token {
        var value: String
        var expires: ContinuousClock.Instant
    }

    /// A client's token, or word that a sync is asking for one (the others wait for it).
    private enum Entry {
        case ready(Token)
        case asking
    }

    /// Tokens by client (token URL, client id, scope): the process's syncs share them. The lock
    /// is never held across a request: a slow token endpoint stalls only its own client's syncs.
    private static let tokens = Mutex<[String: Entry]>([:])

    private enum Next {
        case use(String), wait, ask
    }

    /// The client's token: the one held while it lasts, else a new one from the token URL.
    /// `replacing` a token a request just had refused asks for a new one, unless another sync
    /// already has.
    static func token(for client: Source.OAuthClient, environment: [String: String], fetcher: any Fetching,
                      deadline: ContinuousClock.Instant, timeout: Double, caCert: String?,
                      replacing refused: String? = nil) throws(UpstreamError) -> String {
        guard let id = environment[client.clientIDEnv], !id.isEmpty else { throw .missingToken(variable: client.clientIDEnv) }
        guard let secret = environment[client.clientSecretEnv], !secret.isEmpty else { throw .missingToken(variable: client.clientSecretEnv) }
        for (variable, value) in [(client.clientIDEnv, id), (client.clientSecretEnv, secret)]
        where value.unicodeScalars.contains(where: Source.Header.isControl) {
            throw .badToken(variable: variable)
        }
        var refreshToken: String?
        if let variable = client.refreshTokenEnv {
            guard let value = environment[variable], !value.isEmpty else { throw .missingToken(variable: variable) }
            guard !value.unicodeScalars.contains(where: Source.Header.isControl) else { throw .badToken(variable: variable) }
            refreshToken = value
        }
        let key = [client.tokenURL.absoluteString, id, client.scope ?? "", refreshToken ?? ""].joined(separator: "\n")
        while true {
            let next: Next = tokens.withLock { tokens in
                switch tokens[key] {
                case .ready(let held)? where held.value != refused && held.expires > .now: return .use(held.value)
                case .asking?: return .wait
                default:
                    tokens[key] = .asking
                    return .ask
                }
            }
            switch next {
            case .use(let token):
                return token
            case .wait:
                // Another sync of this process is asking: its answer is this one's too.
                guard ContinuousClock.now < deadline else { throw .timedOut(url: Source.redacted(client.tokenURL), seconds: timeout) }
                sleepSeconds(0.02)
            case .ask:
                do {
                    let token = try ask(client, id: id, secret: secret, refreshToken: refreshToken, fetcher: fetcher, deadline: deadline,
                                        timeout: timeout, caCert: caCert)
                    tokens.withLock { $0[key] = .ready(token) }
                    return token.value
                } catch {
                    tokens.withLock { $0[key] = nil }
                    throw error
                }
            }
        }
    }

    /// A new token from the client's token endpoint.
    private static func ask(_ client: Source.OAuthClient, id: String, secret: String, refreshToken: String?, fetcher: any Fetching,
                            deadline: ContinuousClock.Instant, timeout: Double, caCert: String?) throws(UpstreamError) -> Token {

        // HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1: every byte but the
        // unreserved ones escaped); no redirects, so
        // the credentials go to the token URL and nowhere else.
        let basic = Data((id.percentEncoded() + ":" + secret.percentEncoded()).utf8).base64EncodedString()
        var request = FetchRequest(url: client.tokenURL, headers: [Source.Header(name: "Authorization", value: "Basic " + basic)],
                                   timeout: timeout, deadline: deadline, maxBytes: 1 << 20, maxRedirects: 0, caCert: caCert)
        // The refresh-token grant (RFC 6749 §6) when the source has one; else client credentials.
        let grant = refreshToken.map { "grant_type=refresh_token&refresh_token=" + $0.percentEncoded() } ?? "grant_type=client_credentials"
        request.form = grant + (client.scope.map { "&scope=" + $0.percentEncoded() } ?? "")
        let display = Source.redacted(client.tokenURL)
        let answer: FetchResponse
        do {
            answer = try fetcher.fetch(request)
        } catch {
            if case .httpStatus(let status, _, _) = error, [400, 401, 403].contains(status) {
                throw .tokenRefused(url: display, status: status)
            }
            throw error
        }
        guard let decoded = try? JSONDecoder().decode(TokenAnswer.self, from: answer.body),
              !decoded.accessToken.isEmpty, !decoded.accessToken.unicodeScalars.contains(where: Source.Header.isControl)
        else { throw .badData("the token endpoint \(display) answered without a usable access_token") }
        if let type = decoded.tokenType, type.lowercased() != "bearer" {
            throw .badData("the token endpoint \(display) gave a token that is not a bearer token")
        }
        // Renewed a little before it runs out, so a page is not sent with a dying token.
        let lifetime = min(decoded.expiresIn.map { $0 * 0.9 } ?? 3600, 86_400 * 365)
        return Token(value: decoded.accessToken, expires: .now + .milliseconds(Int64(max(0, lifetime) * 1000)))
    }

    /// A token endpoint's answer; `expires_in` as a number or a numeric string.
    private struct TokenAnswer: Decodable {
        var accessToken: String
        var tokenType: String?
        var expiresIn: Double?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            accessToken = try container.decode(String.self, forKey: .accessToken)
            tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
            expiresIn = (try? container.decodeIfPresent(Double.self, forKey: .expiresIn))
                ?? (try? container.decodeIfPresent(String.self, forKey: .expiresIn)).flatMap { $0.flatMap(Double.init) }
        }
    }
}
