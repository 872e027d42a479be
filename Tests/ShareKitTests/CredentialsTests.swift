import ShareKit
import Testing

struct CredentialsTests {
    @Test("a variable naming a token's or a key's place is shown; the token and the key ID are masked")
    func placesAreNotSecrets() {
        #expect(Credentials.isCredential(variable: "CLOUDKIT_API_TOKEN"))
        #expect(Credentials.isCredential(variable: "GITHUB_TOKEN"))
        #expect(Credentials.isCredential(variable: "CLOUDKIT_KEY_ID"))
        // The key's file is a place: an error about a missing one names it.
        #expect(!Credentials.isCredential(variable: "CLOUDKIT_PRIVATE_KEY_FILE"))
        #expect(!Credentials.isCredential(variable: "SHARELANE_TOKEN_FILE"))
        #expect(!Credentials.isCredential(variable: "SECRETS_DIR"))
        let environment = ["SHARELANE_TOKEN_FILE": "/home/me/.config/sharelane/tokens.json", "MY_TOKEN": "abcdefgh12"]
        #expect(Credentials.secrets(in: environment) == ["abcdefgh12"])
    }
}
