# streamsql in a container: `streamsql worker` for cluster mode (see
# deploy/k8s/ and docs/cluster.md), or any other subcommand.
#
#   docker build -t streamsql .
#   docker run --rm streamsql --version
#
# Build stage: a static binary (every dependency is pure Go, so cgo is
# off and the final image needs no C library).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/streamsql ./cmd/streamsql

# Final stage: Alpine for its CA certificates (HTTPS to object stores)
# and a shell to debug with; the process runs as an unprivileged user.
FROM alpine:3.22
RUN adduser -D -H -u 10001 streamsql && mkdir -p /var/lib/streamsql && chown streamsql /var/lib/streamsql
COPY --from=build /out/streamsql /usr/local/bin/streamsql
USER 10001:10001
ENV TMPDIR=/var/lib/streamsql
EXPOSE 9249
ENTRYPOINT ["/usr/local/bin/streamsql"]
CMD ["--help"]
