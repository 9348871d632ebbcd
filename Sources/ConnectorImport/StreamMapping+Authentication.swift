import OfflineCache

/// The authenticators of Airbyte's CDK, read into the ways cache sends credentials: each secret
/// a variable the sync reads, never a value in the sources file.
extension StreamMapping {
    mutating func authenticate(_ authenticator: YAMLNode, _ requester: YAMLNode, _ headers: inout [String], _ query: inout [(String, String)],
                               _ options: inout [(String, JSONValue)], _ interpolation: inout Interpolation) throws(Refusal) {
        interpolation.parameters = authenticator["$parameters"] ?? requester["$parameters"]
        switch authenticator["type"]?.string ?? "" {
        case "", "NoAuth":
            break
        case "BearerAuthenticator":
            let token = try interpolation.text(authenticator["api_token"]?.string ?? "", "BearerAuthenticator.api_token")
            if let variable = Interpolation.onlyVariable(token) {
                options.append(("token-env", .string(variable)))
            } else {
                headers.append("Authorization: Bearer \(token)")
            }
        case "ApiKeyAuthenticator":
            let token = try interpolation.text(authenticator["api_token"]?.string ?? "", "ApiKeyAuthenticator.api_token")
            let option = authenticator["inject_into"]
            let field = option?["field_name"]?.string ?? authenticator["header"]?.string
            guard let field else { throw Refusal(component: "ApiKeyAuthenticator", reason: "it names no header or parameter to send the key in") }
            switch option?["inject_into"]?.string ?? "header" {
            case "header": headers.append("\(try interpolation.text(field, "ApiKeyAuthenticator")): \(token)")
            case "request_parameter": query.append((field, token))
            case let place: throw Refusal(component: "ApiKeyAuthenticator", reason: "a key sent in the \(place) is not read")
            }
        case "BasicHttpAuthenticator":
            // cache sends Basic from two variables: the user and the password must each be a setting.
            for (field, option) in [("username", "basic-user-env"), ("password", "basic-password-env")] {
                let text = try interpolation.text(authenticator[field]?.string ?? "", "BasicHttpAuthenticator.\(field)")
                // No password: an API key sent as the user name.
                if field == "password", text.isEmpty { continue }
                options.append((option, .string(try Self.variable(of: text, field, "BasicHttpAuthenticator"))))
            }
        case "OAuthAuthenticator":
            if let updater = authenticator["refresh_token_updater"], !updater.isNull {
                throw Refusal(component: "OAuthAuthenticator", reason: "refresh_token_updater: a refresh token the endpoint replaces on each use would have to be written back, which cache does not do")
            }
            guard let endpoint = authenticator["token_refresh_endpoint"]?.string else {
                throw Refusal(component: "OAuthAuthenticator", reason: "it has no token_refresh_endpoint")
            }
            // cache stores a token URL as it is: a setting in it must take its default.
            options.append(("oauth-token-url", .string(try interpolation.literal(endpoint, "OAuthAuthenticator.token_refresh_endpoint"))))
            var fields = [("client_id", "client-id-env"), ("client_secret", "client-secret-env")]
            // The CDK's default grant is the refresh token's; cache asks with that or client credentials.
            let grant = authenticator["grant_type"]?.string ?? "refresh_token"
            guard grant == "refresh_token" || grant == "client_credentials" else {
                throw Refusal(component: "OAuthAuthenticator", reason: "grant_type '\(grant)': cache asks with refresh_token or client_credentials")
            }
            if grant == "refresh_token" { fields.append(("refresh_token", "refresh-token-env")) }
            // What cache reads of the answer is RFC 6749's: an answer in other fields cannot be read.
            for (field, standard) in [("access_token_name", "access_token"), ("expires_in_name", "expires_in")]
            where (authenticator[field]?.string ?? standard) != standard {
                throw Refusal(component: "OAuthAuthenticator", reason: "\(field) '\(authenticator[field]?.string ?? "")': cache reads the token endpoint's standard \(standard)")
            }
            for field in ["refresh_request_body", "refresh_request_headers", "token_expiry_date_format"] where authenticator[field].map({ !$0.isNull }) == true {
                throw Refusal(component: "OAuthAuthenticator", reason: "\(field): cache sends and reads the token request as RFC 6749 does, nothing more")
            }
            notes.append("OAuthAuthenticator: cache sends the client id and secret in HTTP Basic (RFC 6749 §2.3.1), where the CDK sends them in the form")
            for (field, option) in fields {
                let text = try interpolation.text(authenticator[field]?.string ?? "", "OAuthAuthenticator.\(field)")
                options.append((option, .string(try Self.variable(of: text, field, "OAuthAuthenticator"))))
            }
            if let scopes = authenticator["scopes"]?.items?.compactMap(\.string), !scopes.isEmpty {
                options.append(("scope", .string(scopes.joined(separator: " "))))
            }
        case let other:
            throw Refusal(component: other, reason: "not mapped: cache reads the Bearer, API key, Basic and OAuth authenticators")
        }
    }

    /// The variable `text` (a field of `component`) is read from: it must be one setting.
    static func variable(of text: String, _ field: String, _ component: String) throws(Refusal) -> String {
        guard let variable = Interpolation.onlyVariable(text) else {
            throw Refusal(component: component, reason: "its \(field) is not one setting ('\(text)'); cache reads each from a variable")
        }
        return variable
    }
}
