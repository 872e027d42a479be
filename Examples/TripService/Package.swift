// swift-tools-version: 6.0
// A server's own package that tests its CloudKit Web Services client on sharelane's emulator, depending on
// sharelane by path as Docs/Testing.md shows. Scripts/external-package.sh builds and tests it beside a folder
// named `sharelane` (a path dependency's identity is its folder's name).
import PackageDescription

let package = Package(
    name: "TripService",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../sharelane"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        .target(name: "TripService", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "AppTests",
            dependencies: [
                "TripService", .product(name: "SharelaneTesting", package: "sharelane"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
    ]
)
