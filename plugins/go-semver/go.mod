module corral.plugin/go-semver

go 1.27
