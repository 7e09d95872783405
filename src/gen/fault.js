/*eslint-disable block-scoped-var, id-length, no-control-regex, no-magic-numbers, no-prototype-builtins, no-redeclare, no-shadow, no-var, sort-vars*/
"use strict";

var $protobuf = require("protobufjs/minimal");

// Common aliases
var $Reader = $protobuf.Reader, $Writer = $protobuf.Writer, $util = $protobuf.util;

// Exported root namespace
var $root = $protobuf.roots["gensee_v2"] || ($protobuf.roots["gensee_v2"] = {});

$root.gensee = (function() {

    /**
     * Namespace gensee.
     * @exports gensee
     * @namespace
     */
    var gensee = {};

    gensee.v2 = (function() {

        /**
         * Namespace v2.
         * @memberof gensee
         * @namespace
         */
        var v2 = {};

        /**
         * Source enum.
         * @name gensee.v2.Source
         * @enum {number}
         * @property {number} SOURCE_UNSPECIFIED=0 SOURCE_UNSPECIFIED value
         * @property {number} SOURCE_SECCOMP_NOTIFY=1 SOURCE_SECCOMP_NOTIFY value
         * @property {number} SOURCE_CGROUP_HOOK=2 SOURCE_CGROUP_HOOK value
         * @property {number} SOURCE_MANUAL=3 SOURCE_MANUAL value
         * @property {number} SOURCE_PEER_GATEWAY=4 SOURCE_PEER_GATEWAY value
         * @property {number} SOURCE_EXECUTOR=5 SOURCE_EXECUTOR value
         */
        v2.Source = (function() {
            var valuesById = {}, values = Object.create(valuesById);
            values[valuesById[0] = "SOURCE_UNSPECIFIED"] = 0;
            values[valuesById[1] = "SOURCE_SECCOMP_NOTIFY"] = 1;
            values[valuesById[2] = "SOURCE_CGROUP_HOOK"] = 2;
            values[valuesById[3] = "SOURCE_MANUAL"] = 3;
            values[valuesById[4] = "SOURCE_PEER_GATEWAY"] = 4;
            values[valuesById[5] = "SOURCE_EXECUTOR"] = 5;
            return values;
        })();

        /**
         * Family enum.
         * @name gensee.v2.Family
         * @enum {number}
         * @property {number} FAMILY_UNSPECIFIED=0 FAMILY_UNSPECIFIED value
         * @property {number} FAMILY_IPV4=1 FAMILY_IPV4 value
         * @property {number} FAMILY_IPV6=2 FAMILY_IPV6 value
         */
        v2.Family = (function() {
            var valuesById = {}, values = Object.create(valuesById);
            values[valuesById[0] = "FAMILY_UNSPECIFIED"] = 0;
            values[valuesById[1] = "FAMILY_IPV4"] = 1;
            values[valuesById[2] = "FAMILY_IPV6"] = 2;
            return values;
        })();

        /**
         * Protocol enum.
         * @name gensee.v2.Protocol
         * @enum {number}
         * @property {number} PROTOCOL_UNSPECIFIED=0 PROTOCOL_UNSPECIFIED value
         * @property {number} PROTOCOL_TCP=1 PROTOCOL_TCP value
         * @property {number} PROTOCOL_UDP=2 PROTOCOL_UDP value
         */
        v2.Protocol = (function() {
            var valuesById = {}, values = Object.create(valuesById);
            values[valuesById[0] = "PROTOCOL_UNSPECIFIED"] = 0;
            values[valuesById[1] = "PROTOCOL_TCP"] = 1;
            values[valuesById[2] = "PROTOCOL_UDP"] = 2;
            return values;
        })();

        /**
         * FileAccess enum.
         * @name gensee.v2.FileAccess
         * @enum {number}
         * @property {number} FILE_ACCESS_UNSPECIFIED=0 FILE_ACCESS_UNSPECIFIED value
         * @property {number} FILE_ACCESS_READ=1 FILE_ACCESS_READ value
         * @property {number} FILE_ACCESS_WRITE=2 FILE_ACCESS_WRITE value
         * @property {number} FILE_ACCESS_EXEC=3 FILE_ACCESS_EXEC value
         * @property {number} FILE_ACCESS_CREATE=4 FILE_ACCESS_CREATE value
         * @property {number} FILE_ACCESS_DELETE=5 FILE_ACCESS_DELETE value
         */
        v2.FileAccess = (function() {
            var valuesById = {}, values = Object.create(valuesById);
            values[valuesById[0] = "FILE_ACCESS_UNSPECIFIED"] = 0;
            values[valuesById[1] = "FILE_ACCESS_READ"] = 1;
            values[valuesById[2] = "FILE_ACCESS_WRITE"] = 2;
            values[valuesById[3] = "FILE_ACCESS_EXEC"] = 3;
            values[valuesById[4] = "FILE_ACCESS_CREATE"] = 4;
            values[valuesById[5] = "FILE_ACCESS_DELETE"] = 5;
            return values;
        })();

        /**
         * StatementClass enum.
         * @name gensee.v2.StatementClass
         * @enum {number}
         * @property {number} STATEMENT_CLASS_UNSPECIFIED=0 STATEMENT_CLASS_UNSPECIFIED value
         * @property {number} STATEMENT_CLASS_READ=1 STATEMENT_CLASS_READ value
         * @property {number} STATEMENT_CLASS_WRITE=2 STATEMENT_CLASS_WRITE value
         * @property {number} STATEMENT_CLASS_DDL=3 STATEMENT_CLASS_DDL value
         * @property {number} STATEMENT_CLASS_ADMIN=4 STATEMENT_CLASS_ADMIN value
         */
        v2.StatementClass = (function() {
            var valuesById = {}, values = Object.create(valuesById);
            values[valuesById[0] = "STATEMENT_CLASS_UNSPECIFIED"] = 0;
            values[valuesById[1] = "STATEMENT_CLASS_READ"] = 1;
            values[valuesById[2] = "STATEMENT_CLASS_WRITE"] = 2;
            values[valuesById[3] = "STATEMENT_CLASS_DDL"] = 3;
            values[valuesById[4] = "STATEMENT_CLASS_ADMIN"] = 4;
            return values;
        })();

        /**
         * Action enum.
         * @name gensee.v2.Action
         * @enum {number}
         * @property {number} ACTION_UNSPECIFIED=0 ACTION_UNSPECIFIED value
         * @property {number} ACTION_CONTINUE_ALREADY_AUTHORIZED=1 ACTION_CONTINUE_ALREADY_AUTHORIZED value
         * @property {number} ACTION_RETRY_AFTER_LEASE=2 ACTION_RETRY_AFTER_LEASE value
         * @property {number} ACTION_DELEGATE=3 ACTION_DELEGATE value
         * @property {number} ACTION_DENY=4 ACTION_DENY value
         */
        v2.Action = (function() {
            var valuesById = {}, values = Object.create(valuesById);
            values[valuesById[0] = "ACTION_UNSPECIFIED"] = 0;
            values[valuesById[1] = "ACTION_CONTINUE_ALREADY_AUTHORIZED"] = 1;
            values[valuesById[2] = "ACTION_RETRY_AFTER_LEASE"] = 2;
            values[valuesById[3] = "ACTION_DELEGATE"] = 3;
            values[valuesById[4] = "ACTION_DENY"] = 4;
            return values;
        })();

        v2.ProcessSubject = (function() {

            /**
             * Properties of a ProcessSubject.
             * @memberof gensee.v2
             * @interface IProcessSubject
             * @property {number|null} [pid] ProcessSubject pid
             * @property {number|Long|null} [start_time_ticks] ProcessSubject start_time_ticks
             */

            /**
             * Constructs a new ProcessSubject.
             * @memberof gensee.v2
             * @classdesc Represents a ProcessSubject.
             * @implements IProcessSubject
             * @constructor
             * @param {gensee.v2.IProcessSubject=} [properties] Properties to set
             */
            function ProcessSubject(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ProcessSubject pid.
             * @member {number} pid
             * @memberof gensee.v2.ProcessSubject
             * @instance
             */
            ProcessSubject.prototype.pid = 0;

            /**
             * ProcessSubject start_time_ticks.
             * @member {number|Long} start_time_ticks
             * @memberof gensee.v2.ProcessSubject
             * @instance
             */
            ProcessSubject.prototype.start_time_ticks = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Creates a new ProcessSubject instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ProcessSubject
             * @static
             * @param {gensee.v2.IProcessSubject=} [properties] Properties to set
             * @returns {gensee.v2.ProcessSubject} ProcessSubject instance
             */
            ProcessSubject.create = function create(properties) {
                return new ProcessSubject(properties);
            };

            /**
             * Encodes the specified ProcessSubject message. Does not implicitly {@link gensee.v2.ProcessSubject.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ProcessSubject
             * @static
             * @param {gensee.v2.IProcessSubject} message ProcessSubject message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ProcessSubject.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.pid != null && Object.hasOwnProperty.call(message, "pid"))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.pid);
                if (message.start_time_ticks != null && Object.hasOwnProperty.call(message, "start_time_ticks"))
                    writer.uint32(/* id 2, wireType 0 =*/16).uint64(message.start_time_ticks);
                return writer;
            };

            /**
             * Decodes a ProcessSubject message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ProcessSubject
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ProcessSubject} ProcessSubject
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ProcessSubject.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.ProcessSubject();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.pid = reader.uint32();
                            break;
                        }
                    case 2: {
                            message.start_time_ticks = reader.uint64();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a ProcessSubject message.
             * @function verify
             * @memberof gensee.v2.ProcessSubject
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ProcessSubject.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.pid != null && Object.hasOwnProperty.call(message, "pid"))
                    if (!$util.isInteger(message.pid))
                        return "pid: integer expected";
                if (message.start_time_ticks != null && Object.hasOwnProperty.call(message, "start_time_ticks"))
                    if (!$util.isInteger(message.start_time_ticks) && !(message.start_time_ticks && $util.isInteger(message.start_time_ticks.low) && $util.isInteger(message.start_time_ticks.high)))
                        return "start_time_ticks: integer|Long expected";
                return null;
            };

            /**
             * Creates a ProcessSubject message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ProcessSubject
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ProcessSubject} ProcessSubject
             */
            ProcessSubject.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ProcessSubject)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ProcessSubject: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ProcessSubject();
                if (object.pid != null)
                    message.pid = object.pid >>> 0;
                if (object.start_time_ticks != null)
                    if ($util.Long)
                        message.start_time_ticks = $util.Long.fromValue(object.start_time_ticks, true);
                    else if (typeof object.start_time_ticks === "string")
                        message.start_time_ticks = parseInt(object.start_time_ticks, 10);
                    else if (typeof object.start_time_ticks === "number")
                        message.start_time_ticks = object.start_time_ticks;
                    else if (typeof object.start_time_ticks === "object")
                        message.start_time_ticks = new $util.LongBits(object.start_time_ticks.low >>> 0, object.start_time_ticks.high >>> 0).toNumber(true);
                return message;
            };

            /**
             * Creates a plain object from a ProcessSubject message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ProcessSubject
             * @static
             * @param {gensee.v2.ProcessSubject} message ProcessSubject
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ProcessSubject.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.pid = 0;
                    if ($util.Long) {
                        var long = new $util.Long(0, 0, true);
                        object.start_time_ticks = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                    } else
                        object.start_time_ticks = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                }
                if (message.pid != null && Object.hasOwnProperty.call(message, "pid"))
                    object.pid = message.pid;
                if (message.start_time_ticks != null && Object.hasOwnProperty.call(message, "start_time_ticks"))
                    if (typeof BigInt !== "undefined" && options.longs === BigInt)
                        object.start_time_ticks = typeof message.start_time_ticks === "number" ? BigInt(message.start_time_ticks) : $util.Long.fromBits(message.start_time_ticks.low >>> 0, message.start_time_ticks.high >>> 0, true).toBigInt();
                    else if (typeof message.start_time_ticks === "number")
                        object.start_time_ticks = options.longs === String ? String(message.start_time_ticks) : message.start_time_ticks;
                    else
                        object.start_time_ticks = options.longs === String ? $util.Long.prototype.toString.call(message.start_time_ticks) : options.longs === Number ? new $util.LongBits(message.start_time_ticks.low >>> 0, message.start_time_ticks.high >>> 0).toNumber(true) : message.start_time_ticks;
                return object;
            };

            /**
             * Converts this ProcessSubject to JSON.
             * @function toJSON
             * @memberof gensee.v2.ProcessSubject
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ProcessSubject.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ProcessSubject;
        })();

        v2.PeerSubject = (function() {

            /**
             * Properties of a PeerSubject.
             * @memberof gensee.v2
             * @interface IPeerSubject
             * @property {string|null} [address] PeerSubject address
             */

            /**
             * Constructs a new PeerSubject.
             * @memberof gensee.v2
             * @classdesc Represents a PeerSubject.
             * @implements IPeerSubject
             * @constructor
             * @param {gensee.v2.IPeerSubject=} [properties] Properties to set
             */
            function PeerSubject(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * PeerSubject address.
             * @member {string} address
             * @memberof gensee.v2.PeerSubject
             * @instance
             */
            PeerSubject.prototype.address = "";

            /**
             * Creates a new PeerSubject instance using the specified properties.
             * @function create
             * @memberof gensee.v2.PeerSubject
             * @static
             * @param {gensee.v2.IPeerSubject=} [properties] Properties to set
             * @returns {gensee.v2.PeerSubject} PeerSubject instance
             */
            PeerSubject.create = function create(properties) {
                return new PeerSubject(properties);
            };

            /**
             * Encodes the specified PeerSubject message. Does not implicitly {@link gensee.v2.PeerSubject.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.PeerSubject
             * @static
             * @param {gensee.v2.IPeerSubject} message PeerSubject message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            PeerSubject.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.address);
                return writer;
            };

            /**
             * Decodes a PeerSubject message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.PeerSubject
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.PeerSubject} PeerSubject
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            PeerSubject.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.PeerSubject();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.address = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a PeerSubject message.
             * @function verify
             * @memberof gensee.v2.PeerSubject
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            PeerSubject.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    if (!$util.isString(message.address))
                        return "address: string expected";
                return null;
            };

            /**
             * Creates a PeerSubject message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.PeerSubject
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.PeerSubject} PeerSubject
             */
            PeerSubject.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.PeerSubject)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.PeerSubject: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.PeerSubject();
                if (object.address != null)
                    message.address = String(object.address);
                return message;
            };

            /**
             * Creates a plain object from a PeerSubject message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.PeerSubject
             * @static
             * @param {gensee.v2.PeerSubject} message PeerSubject
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            PeerSubject.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults)
                    object.address = "";
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    object.address = message.address;
                return object;
            };

            /**
             * Converts this PeerSubject to JSON.
             * @function toJSON
             * @memberof gensee.v2.PeerSubject
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            PeerSubject.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return PeerSubject;
        })();

        v2.Subject = (function() {

            /**
             * Properties of a Subject.
             * @memberof gensee.v2
             * @interface ISubject
             * @property {gensee.v2.IProcessSubject|null} [process] Subject process
             * @property {gensee.v2.IPeerSubject|null} [peer] Subject peer
             */

            /**
             * Constructs a new Subject.
             * @memberof gensee.v2
             * @classdesc Represents a Subject.
             * @implements ISubject
             * @constructor
             * @param {gensee.v2.ISubject=} [properties] Properties to set
             */
            function Subject(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * Subject process.
             * @member {gensee.v2.IProcessSubject|null|undefined} process
             * @memberof gensee.v2.Subject
             * @instance
             */
            Subject.prototype.process = null;

            /**
             * Subject peer.
             * @member {gensee.v2.IPeerSubject|null|undefined} peer
             * @memberof gensee.v2.Subject
             * @instance
             */
            Subject.prototype.peer = null;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            /**
             * Subject kind.
             * @member {"process"|"peer"|undefined} kind
             * @memberof gensee.v2.Subject
             * @instance
             */
            Object.defineProperty(Subject.prototype, "kind", {
                get: $util.oneOfGetter($oneOfFields = ["process", "peer"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Creates a new Subject instance using the specified properties.
             * @function create
             * @memberof gensee.v2.Subject
             * @static
             * @param {gensee.v2.ISubject=} [properties] Properties to set
             * @returns {gensee.v2.Subject} Subject instance
             */
            Subject.create = function create(properties) {
                return new Subject(properties);
            };

            /**
             * Encodes the specified Subject message. Does not implicitly {@link gensee.v2.Subject.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.Subject
             * @static
             * @param {gensee.v2.ISubject} message Subject message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Subject.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.process != null && Object.hasOwnProperty.call(message, "process"))
                    $root.gensee.v2.ProcessSubject.encode(message.process, writer.uint32(/* id 1, wireType 2 =*/10).fork(), q + 1).ldelim();
                if (message.peer != null && Object.hasOwnProperty.call(message, "peer"))
                    $root.gensee.v2.PeerSubject.encode(message.peer, writer.uint32(/* id 2, wireType 2 =*/18).fork(), q + 1).ldelim();
                return writer;
            };

            /**
             * Decodes a Subject message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.Subject
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.Subject} Subject
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Subject.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.Subject();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.process = $root.gensee.v2.ProcessSubject.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 2: {
                            message.peer = $root.gensee.v2.PeerSubject.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a Subject message.
             * @function verify
             * @memberof gensee.v2.Subject
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            Subject.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                var properties = {};
                if (message.process != null && Object.hasOwnProperty.call(message, "process")) {
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.ProcessSubject.verify(message.process, long + 1);
                        if (error)
                            return "process." + error;
                    }
                }
                if (message.peer != null && Object.hasOwnProperty.call(message, "peer")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.PeerSubject.verify(message.peer, long + 1);
                        if (error)
                            return "peer." + error;
                    }
                }
                return null;
            };

            /**
             * Creates a Subject message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.Subject
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.Subject} Subject
             */
            Subject.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.Subject)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.Subject: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.Subject();
                if (object.process != null) {
                    if (!$util.isObject(object.process))
                        throw TypeError(".gensee.v2.Subject.process: object expected");
                    message.process = $root.gensee.v2.ProcessSubject.fromObject(object.process, long + 1);
                }
                if (object.peer != null) {
                    if (!$util.isObject(object.peer))
                        throw TypeError(".gensee.v2.Subject.peer: object expected");
                    message.peer = $root.gensee.v2.PeerSubject.fromObject(object.peer, long + 1);
                }
                return message;
            };

            /**
             * Creates a plain object from a Subject message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.Subject
             * @static
             * @param {gensee.v2.Subject} message Subject
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            Subject.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (message.process != null && Object.hasOwnProperty.call(message, "process")) {
                    object.process = $root.gensee.v2.ProcessSubject.toObject(message.process, options, q + 1);
                    if (options.oneofs)
                        object.kind = "process";
                }
                if (message.peer != null && Object.hasOwnProperty.call(message, "peer")) {
                    object.peer = $root.gensee.v2.PeerSubject.toObject(message.peer, options, q + 1);
                    if (options.oneofs)
                        object.kind = "peer";
                }
                return object;
            };

            /**
             * Converts this Subject to JSON.
             * @function toJSON
             * @memberof gensee.v2.Subject
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            Subject.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return Subject;
        })();

        v2.NetworkEffect = (function() {

            /**
             * Properties of a NetworkEffect.
             * @memberof gensee.v2
             * @interface INetworkEffect
             * @property {gensee.v2.Family|null} [family] NetworkEffect family
             * @property {gensee.v2.Protocol|null} [protocol] NetworkEffect protocol
             * @property {string|null} [address] NetworkEffect address
             * @property {number|null} [port] NetworkEffect port
             */

            /**
             * Constructs a new NetworkEffect.
             * @memberof gensee.v2
             * @classdesc Represents a NetworkEffect.
             * @implements INetworkEffect
             * @constructor
             * @param {gensee.v2.INetworkEffect=} [properties] Properties to set
             */
            function NetworkEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * NetworkEffect family.
             * @member {gensee.v2.Family} family
             * @memberof gensee.v2.NetworkEffect
             * @instance
             */
            NetworkEffect.prototype.family = 0;

            /**
             * NetworkEffect protocol.
             * @member {gensee.v2.Protocol} protocol
             * @memberof gensee.v2.NetworkEffect
             * @instance
             */
            NetworkEffect.prototype.protocol = 0;

            /**
             * NetworkEffect address.
             * @member {string} address
             * @memberof gensee.v2.NetworkEffect
             * @instance
             */
            NetworkEffect.prototype.address = "";

            /**
             * NetworkEffect port.
             * @member {number} port
             * @memberof gensee.v2.NetworkEffect
             * @instance
             */
            NetworkEffect.prototype.port = 0;

            /**
             * Creates a new NetworkEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.NetworkEffect
             * @static
             * @param {gensee.v2.INetworkEffect=} [properties] Properties to set
             * @returns {gensee.v2.NetworkEffect} NetworkEffect instance
             */
            NetworkEffect.create = function create(properties) {
                return new NetworkEffect(properties);
            };

            /**
             * Encodes the specified NetworkEffect message. Does not implicitly {@link gensee.v2.NetworkEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.NetworkEffect
             * @static
             * @param {gensee.v2.INetworkEffect} message NetworkEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            NetworkEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.family != null && Object.hasOwnProperty.call(message, "family"))
                    writer.uint32(/* id 1, wireType 0 =*/8).int32(message.family);
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    writer.uint32(/* id 2, wireType 0 =*/16).int32(message.protocol);
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.address);
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.port);
                return writer;
            };

            /**
             * Decodes a NetworkEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.NetworkEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.NetworkEffect} NetworkEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            NetworkEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.NetworkEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.family = reader.int32();
                            break;
                        }
                    case 2: {
                            message.protocol = reader.int32();
                            break;
                        }
                    case 3: {
                            message.address = reader.string();
                            break;
                        }
                    case 4: {
                            message.port = reader.uint32();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a NetworkEffect message.
             * @function verify
             * @memberof gensee.v2.NetworkEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            NetworkEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.family != null && Object.hasOwnProperty.call(message, "family"))
                    switch (message.family) {
                    default:
                        return "family: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                        break;
                    }
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    switch (message.protocol) {
                    default:
                        return "protocol: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                        break;
                    }
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    if (!$util.isString(message.address))
                        return "address: string expected";
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    if (!$util.isInteger(message.port))
                        return "port: integer expected";
                return null;
            };

            /**
             * Creates a NetworkEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.NetworkEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.NetworkEffect} NetworkEffect
             */
            NetworkEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.NetworkEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.NetworkEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.NetworkEffect();
                switch (object.family) {
                default:
                    if (typeof object.family === "number") {
                        message.family = object.family;
                        break;
                    }
                    break;
                case "FAMILY_UNSPECIFIED":
                case 0:
                    message.family = 0;
                    break;
                case "FAMILY_IPV4":
                case 1:
                    message.family = 1;
                    break;
                case "FAMILY_IPV6":
                case 2:
                    message.family = 2;
                    break;
                }
                switch (object.protocol) {
                default:
                    if (typeof object.protocol === "number") {
                        message.protocol = object.protocol;
                        break;
                    }
                    break;
                case "PROTOCOL_UNSPECIFIED":
                case 0:
                    message.protocol = 0;
                    break;
                case "PROTOCOL_TCP":
                case 1:
                    message.protocol = 1;
                    break;
                case "PROTOCOL_UDP":
                case 2:
                    message.protocol = 2;
                    break;
                }
                if (object.address != null)
                    message.address = String(object.address);
                if (object.port != null)
                    message.port = object.port >>> 0;
                return message;
            };

            /**
             * Creates a plain object from a NetworkEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.NetworkEffect
             * @static
             * @param {gensee.v2.NetworkEffect} message NetworkEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            NetworkEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.family = options.enums === String ? "FAMILY_UNSPECIFIED" : 0;
                    object.protocol = options.enums === String ? "PROTOCOL_UNSPECIFIED" : 0;
                    object.address = "";
                    object.port = 0;
                }
                if (message.family != null && Object.hasOwnProperty.call(message, "family"))
                    object.family = options.enums === String ? $root.gensee.v2.Family[message.family] === undefined ? message.family : $root.gensee.v2.Family[message.family] : message.family;
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    object.protocol = options.enums === String ? $root.gensee.v2.Protocol[message.protocol] === undefined ? message.protocol : $root.gensee.v2.Protocol[message.protocol] : message.protocol;
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    object.address = message.address;
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    object.port = message.port;
                return object;
            };

            /**
             * Converts this NetworkEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.NetworkEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            NetworkEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return NetworkEffect;
        })();

        v2.FileEffect = (function() {

            /**
             * Properties of a FileEffect.
             * @memberof gensee.v2
             * @interface IFileEffect
             * @property {string|null} [path] FileEffect path
             * @property {gensee.v2.FileAccess|null} [access] FileEffect access
             */

            /**
             * Constructs a new FileEffect.
             * @memberof gensee.v2
             * @classdesc Represents a FileEffect.
             * @implements IFileEffect
             * @constructor
             * @param {gensee.v2.IFileEffect=} [properties] Properties to set
             */
            function FileEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * FileEffect path.
             * @member {string} path
             * @memberof gensee.v2.FileEffect
             * @instance
             */
            FileEffect.prototype.path = "";

            /**
             * FileEffect access.
             * @member {gensee.v2.FileAccess} access
             * @memberof gensee.v2.FileEffect
             * @instance
             */
            FileEffect.prototype.access = 0;

            /**
             * Creates a new FileEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.FileEffect
             * @static
             * @param {gensee.v2.IFileEffect=} [properties] Properties to set
             * @returns {gensee.v2.FileEffect} FileEffect instance
             */
            FileEffect.create = function create(properties) {
                return new FileEffect(properties);
            };

            /**
             * Encodes the specified FileEffect message. Does not implicitly {@link gensee.v2.FileEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.FileEffect
             * @static
             * @param {gensee.v2.IFileEffect} message FileEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            FileEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.path != null && Object.hasOwnProperty.call(message, "path"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.path);
                if (message.access != null && Object.hasOwnProperty.call(message, "access"))
                    writer.uint32(/* id 2, wireType 0 =*/16).int32(message.access);
                return writer;
            };

            /**
             * Decodes a FileEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.FileEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.FileEffect} FileEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            FileEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.FileEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.path = reader.string();
                            break;
                        }
                    case 2: {
                            message.access = reader.int32();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a FileEffect message.
             * @function verify
             * @memberof gensee.v2.FileEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            FileEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.path != null && Object.hasOwnProperty.call(message, "path"))
                    if (!$util.isString(message.path))
                        return "path: string expected";
                if (message.access != null && Object.hasOwnProperty.call(message, "access"))
                    switch (message.access) {
                    default:
                        return "access: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                    case 3:
                    case 4:
                    case 5:
                        break;
                    }
                return null;
            };

            /**
             * Creates a FileEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.FileEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.FileEffect} FileEffect
             */
            FileEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.FileEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.FileEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.FileEffect();
                if (object.path != null)
                    message.path = String(object.path);
                switch (object.access) {
                default:
                    if (typeof object.access === "number") {
                        message.access = object.access;
                        break;
                    }
                    break;
                case "FILE_ACCESS_UNSPECIFIED":
                case 0:
                    message.access = 0;
                    break;
                case "FILE_ACCESS_READ":
                case 1:
                    message.access = 1;
                    break;
                case "FILE_ACCESS_WRITE":
                case 2:
                    message.access = 2;
                    break;
                case "FILE_ACCESS_EXEC":
                case 3:
                    message.access = 3;
                    break;
                case "FILE_ACCESS_CREATE":
                case 4:
                    message.access = 4;
                    break;
                case "FILE_ACCESS_DELETE":
                case 5:
                    message.access = 5;
                    break;
                }
                return message;
            };

            /**
             * Creates a plain object from a FileEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.FileEffect
             * @static
             * @param {gensee.v2.FileEffect} message FileEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            FileEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.path = "";
                    object.access = options.enums === String ? "FILE_ACCESS_UNSPECIFIED" : 0;
                }
                if (message.path != null && Object.hasOwnProperty.call(message, "path"))
                    object.path = message.path;
                if (message.access != null && Object.hasOwnProperty.call(message, "access"))
                    object.access = options.enums === String ? $root.gensee.v2.FileAccess[message.access] === undefined ? message.access : $root.gensee.v2.FileAccess[message.access] : message.access;
                return object;
            };

            /**
             * Converts this FileEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.FileEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            FileEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return FileEffect;
        })();

        v2.SyscallEffect = (function() {

            /**
             * Properties of a SyscallEffect.
             * @memberof gensee.v2
             * @interface ISyscallEffect
             * @property {string|null} [name] SyscallEffect name
             * @property {number|null} [number] SyscallEffect number
             * @property {string|null} [capability] SyscallEffect capability
             */

            /**
             * Constructs a new SyscallEffect.
             * @memberof gensee.v2
             * @classdesc Represents a SyscallEffect.
             * @implements ISyscallEffect
             * @constructor
             * @param {gensee.v2.ISyscallEffect=} [properties] Properties to set
             */
            function SyscallEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * SyscallEffect name.
             * @member {string} name
             * @memberof gensee.v2.SyscallEffect
             * @instance
             */
            SyscallEffect.prototype.name = "";

            /**
             * SyscallEffect number.
             * @member {number} number
             * @memberof gensee.v2.SyscallEffect
             * @instance
             */
            SyscallEffect.prototype.number = 0;

            /**
             * SyscallEffect capability.
             * @member {string} capability
             * @memberof gensee.v2.SyscallEffect
             * @instance
             */
            SyscallEffect.prototype.capability = "";

            /**
             * Creates a new SyscallEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.SyscallEffect
             * @static
             * @param {gensee.v2.ISyscallEffect=} [properties] Properties to set
             * @returns {gensee.v2.SyscallEffect} SyscallEffect instance
             */
            SyscallEffect.create = function create(properties) {
                return new SyscallEffect(properties);
            };

            /**
             * Encodes the specified SyscallEffect message. Does not implicitly {@link gensee.v2.SyscallEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.SyscallEffect
             * @static
             * @param {gensee.v2.ISyscallEffect} message SyscallEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            SyscallEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.name);
                if (message.number != null && Object.hasOwnProperty.call(message, "number"))
                    writer.uint32(/* id 2, wireType 0 =*/16).uint32(message.number);
                if (message.capability != null && Object.hasOwnProperty.call(message, "capability"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.capability);
                return writer;
            };

            /**
             * Decodes a SyscallEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.SyscallEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.SyscallEffect} SyscallEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            SyscallEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.SyscallEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.name = reader.string();
                            break;
                        }
                    case 2: {
                            message.number = reader.uint32();
                            break;
                        }
                    case 3: {
                            message.capability = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a SyscallEffect message.
             * @function verify
             * @memberof gensee.v2.SyscallEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            SyscallEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    if (!$util.isString(message.name))
                        return "name: string expected";
                if (message.number != null && Object.hasOwnProperty.call(message, "number"))
                    if (!$util.isInteger(message.number))
                        return "number: integer expected";
                if (message.capability != null && Object.hasOwnProperty.call(message, "capability"))
                    if (!$util.isString(message.capability))
                        return "capability: string expected";
                return null;
            };

            /**
             * Creates a SyscallEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.SyscallEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.SyscallEffect} SyscallEffect
             */
            SyscallEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.SyscallEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.SyscallEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.SyscallEffect();
                if (object.name != null)
                    message.name = String(object.name);
                if (object.number != null)
                    message.number = object.number >>> 0;
                if (object.capability != null)
                    message.capability = String(object.capability);
                return message;
            };

            /**
             * Creates a plain object from a SyscallEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.SyscallEffect
             * @static
             * @param {gensee.v2.SyscallEffect} message SyscallEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            SyscallEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.name = "";
                    object.number = 0;
                    object.capability = "";
                }
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    object.name = message.name;
                if (message.number != null && Object.hasOwnProperty.call(message, "number"))
                    object.number = message.number;
                if (message.capability != null && Object.hasOwnProperty.call(message, "capability"))
                    object.capability = message.capability;
                return object;
            };

            /**
             * Converts this SyscallEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.SyscallEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            SyscallEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return SyscallEffect;
        })();

        v2.SecretEffect = (function() {

            /**
             * Properties of a SecretEffect.
             * @memberof gensee.v2
             * @interface ISecretEffect
             * @property {string|null} [name] SecretEffect name
             * @property {string|null} [scope] SecretEffect scope
             */

            /**
             * Constructs a new SecretEffect.
             * @memberof gensee.v2
             * @classdesc Represents a SecretEffect.
             * @implements ISecretEffect
             * @constructor
             * @param {gensee.v2.ISecretEffect=} [properties] Properties to set
             */
            function SecretEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * SecretEffect name.
             * @member {string} name
             * @memberof gensee.v2.SecretEffect
             * @instance
             */
            SecretEffect.prototype.name = "";

            /**
             * SecretEffect scope.
             * @member {string} scope
             * @memberof gensee.v2.SecretEffect
             * @instance
             */
            SecretEffect.prototype.scope = "";

            /**
             * Creates a new SecretEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.SecretEffect
             * @static
             * @param {gensee.v2.ISecretEffect=} [properties] Properties to set
             * @returns {gensee.v2.SecretEffect} SecretEffect instance
             */
            SecretEffect.create = function create(properties) {
                return new SecretEffect(properties);
            };

            /**
             * Encodes the specified SecretEffect message. Does not implicitly {@link gensee.v2.SecretEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.SecretEffect
             * @static
             * @param {gensee.v2.ISecretEffect} message SecretEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            SecretEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.name);
                if (message.scope != null && Object.hasOwnProperty.call(message, "scope"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.scope);
                return writer;
            };

            /**
             * Decodes a SecretEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.SecretEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.SecretEffect} SecretEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            SecretEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.SecretEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.name = reader.string();
                            break;
                        }
                    case 2: {
                            message.scope = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a SecretEffect message.
             * @function verify
             * @memberof gensee.v2.SecretEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            SecretEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    if (!$util.isString(message.name))
                        return "name: string expected";
                if (message.scope != null && Object.hasOwnProperty.call(message, "scope"))
                    if (!$util.isString(message.scope))
                        return "scope: string expected";
                return null;
            };

            /**
             * Creates a SecretEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.SecretEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.SecretEffect} SecretEffect
             */
            SecretEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.SecretEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.SecretEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.SecretEffect();
                if (object.name != null)
                    message.name = String(object.name);
                if (object.scope != null)
                    message.scope = String(object.scope);
                return message;
            };

            /**
             * Creates a plain object from a SecretEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.SecretEffect
             * @static
             * @param {gensee.v2.SecretEffect} message SecretEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            SecretEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.name = "";
                    object.scope = "";
                }
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    object.name = message.name;
                if (message.scope != null && Object.hasOwnProperty.call(message, "scope"))
                    object.scope = message.scope;
                return object;
            };

            /**
             * Converts this SecretEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.SecretEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            SecretEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return SecretEffect;
        })();

        v2.CloudIamEffect = (function() {

            /**
             * Properties of a CloudIamEffect.
             * @memberof gensee.v2
             * @interface ICloudIamEffect
             * @property {string|null} [provider] CloudIamEffect provider
             * @property {string|null} [action] CloudIamEffect action
             * @property {string|null} [resource] CloudIamEffect resource
             */

            /**
             * Constructs a new CloudIamEffect.
             * @memberof gensee.v2
             * @classdesc Represents a CloudIamEffect.
             * @implements ICloudIamEffect
             * @constructor
             * @param {gensee.v2.ICloudIamEffect=} [properties] Properties to set
             */
            function CloudIamEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * CloudIamEffect provider.
             * @member {string} provider
             * @memberof gensee.v2.CloudIamEffect
             * @instance
             */
            CloudIamEffect.prototype.provider = "";

            /**
             * CloudIamEffect action.
             * @member {string} action
             * @memberof gensee.v2.CloudIamEffect
             * @instance
             */
            CloudIamEffect.prototype.action = "";

            /**
             * CloudIamEffect resource.
             * @member {string} resource
             * @memberof gensee.v2.CloudIamEffect
             * @instance
             */
            CloudIamEffect.prototype.resource = "";

            /**
             * Creates a new CloudIamEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.CloudIamEffect
             * @static
             * @param {gensee.v2.ICloudIamEffect=} [properties] Properties to set
             * @returns {gensee.v2.CloudIamEffect} CloudIamEffect instance
             */
            CloudIamEffect.create = function create(properties) {
                return new CloudIamEffect(properties);
            };

            /**
             * Encodes the specified CloudIamEffect message. Does not implicitly {@link gensee.v2.CloudIamEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.CloudIamEffect
             * @static
             * @param {gensee.v2.ICloudIamEffect} message CloudIamEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            CloudIamEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.provider != null && Object.hasOwnProperty.call(message, "provider"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.provider);
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.action);
                if (message.resource != null && Object.hasOwnProperty.call(message, "resource"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.resource);
                return writer;
            };

            /**
             * Decodes a CloudIamEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.CloudIamEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.CloudIamEffect} CloudIamEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            CloudIamEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.CloudIamEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.provider = reader.string();
                            break;
                        }
                    case 2: {
                            message.action = reader.string();
                            break;
                        }
                    case 3: {
                            message.resource = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a CloudIamEffect message.
             * @function verify
             * @memberof gensee.v2.CloudIamEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            CloudIamEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.provider != null && Object.hasOwnProperty.call(message, "provider"))
                    if (!$util.isString(message.provider))
                        return "provider: string expected";
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    if (!$util.isString(message.action))
                        return "action: string expected";
                if (message.resource != null && Object.hasOwnProperty.call(message, "resource"))
                    if (!$util.isString(message.resource))
                        return "resource: string expected";
                return null;
            };

            /**
             * Creates a CloudIamEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.CloudIamEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.CloudIamEffect} CloudIamEffect
             */
            CloudIamEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.CloudIamEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.CloudIamEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.CloudIamEffect();
                if (object.provider != null)
                    message.provider = String(object.provider);
                if (object.action != null)
                    message.action = String(object.action);
                if (object.resource != null)
                    message.resource = String(object.resource);
                return message;
            };

            /**
             * Creates a plain object from a CloudIamEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.CloudIamEffect
             * @static
             * @param {gensee.v2.CloudIamEffect} message CloudIamEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            CloudIamEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.provider = "";
                    object.action = "";
                    object.resource = "";
                }
                if (message.provider != null && Object.hasOwnProperty.call(message, "provider"))
                    object.provider = message.provider;
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    object.action = message.action;
                if (message.resource != null && Object.hasOwnProperty.call(message, "resource"))
                    object.resource = message.resource;
                return object;
            };

            /**
             * Converts this CloudIamEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.CloudIamEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            CloudIamEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return CloudIamEffect;
        })();

        v2.ApplicationEffect = (function() {

            /**
             * Properties of an ApplicationEffect.
             * @memberof gensee.v2
             * @interface IApplicationEffect
             * @property {string|null} [name] ApplicationEffect name
             * @property {string|null} [action] ApplicationEffect action
             * @property {string|null} [target] ApplicationEffect target
             */

            /**
             * Constructs a new ApplicationEffect.
             * @memberof gensee.v2
             * @classdesc Represents an ApplicationEffect.
             * @implements IApplicationEffect
             * @constructor
             * @param {gensee.v2.IApplicationEffect=} [properties] Properties to set
             */
            function ApplicationEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ApplicationEffect name.
             * @member {string} name
             * @memberof gensee.v2.ApplicationEffect
             * @instance
             */
            ApplicationEffect.prototype.name = "";

            /**
             * ApplicationEffect action.
             * @member {string} action
             * @memberof gensee.v2.ApplicationEffect
             * @instance
             */
            ApplicationEffect.prototype.action = "";

            /**
             * ApplicationEffect target.
             * @member {string} target
             * @memberof gensee.v2.ApplicationEffect
             * @instance
             */
            ApplicationEffect.prototype.target = "";

            /**
             * Creates a new ApplicationEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ApplicationEffect
             * @static
             * @param {gensee.v2.IApplicationEffect=} [properties] Properties to set
             * @returns {gensee.v2.ApplicationEffect} ApplicationEffect instance
             */
            ApplicationEffect.create = function create(properties) {
                return new ApplicationEffect(properties);
            };

            /**
             * Encodes the specified ApplicationEffect message. Does not implicitly {@link gensee.v2.ApplicationEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ApplicationEffect
             * @static
             * @param {gensee.v2.IApplicationEffect} message ApplicationEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ApplicationEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.name);
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.action);
                if (message.target != null && Object.hasOwnProperty.call(message, "target"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.target);
                return writer;
            };

            /**
             * Decodes an ApplicationEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ApplicationEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ApplicationEffect} ApplicationEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ApplicationEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.ApplicationEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.name = reader.string();
                            break;
                        }
                    case 2: {
                            message.action = reader.string();
                            break;
                        }
                    case 3: {
                            message.target = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies an ApplicationEffect message.
             * @function verify
             * @memberof gensee.v2.ApplicationEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ApplicationEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    if (!$util.isString(message.name))
                        return "name: string expected";
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    if (!$util.isString(message.action))
                        return "action: string expected";
                if (message.target != null && Object.hasOwnProperty.call(message, "target"))
                    if (!$util.isString(message.target))
                        return "target: string expected";
                return null;
            };

            /**
             * Creates an ApplicationEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ApplicationEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ApplicationEffect} ApplicationEffect
             */
            ApplicationEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ApplicationEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ApplicationEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ApplicationEffect();
                if (object.name != null)
                    message.name = String(object.name);
                if (object.action != null)
                    message.action = String(object.action);
                if (object.target != null)
                    message.target = String(object.target);
                return message;
            };

            /**
             * Creates a plain object from an ApplicationEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ApplicationEffect
             * @static
             * @param {gensee.v2.ApplicationEffect} message ApplicationEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ApplicationEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.name = "";
                    object.action = "";
                    object.target = "";
                }
                if (message.name != null && Object.hasOwnProperty.call(message, "name"))
                    object.name = message.name;
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    object.action = message.action;
                if (message.target != null && Object.hasOwnProperty.call(message, "target"))
                    object.target = message.target;
                return object;
            };

            /**
             * Converts this ApplicationEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.ApplicationEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ApplicationEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ApplicationEffect;
        })();

        v2.DatabaseEffect = (function() {

            /**
             * Properties of a DatabaseEffect.
             * @memberof gensee.v2
             * @interface IDatabaseEffect
             * @property {string|null} [engine] DatabaseEffect engine
             * @property {string|null} [database] DatabaseEffect database
             * @property {gensee.v2.StatementClass|null} [statement_class] DatabaseEffect statement_class
             * @property {string|null} [table] DatabaseEffect table
             */

            /**
             * Constructs a new DatabaseEffect.
             * @memberof gensee.v2
             * @classdesc Represents a DatabaseEffect.
             * @implements IDatabaseEffect
             * @constructor
             * @param {gensee.v2.IDatabaseEffect=} [properties] Properties to set
             */
            function DatabaseEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * DatabaseEffect engine.
             * @member {string} engine
             * @memberof gensee.v2.DatabaseEffect
             * @instance
             */
            DatabaseEffect.prototype.engine = "";

            /**
             * DatabaseEffect database.
             * @member {string} database
             * @memberof gensee.v2.DatabaseEffect
             * @instance
             */
            DatabaseEffect.prototype.database = "";

            /**
             * DatabaseEffect statement_class.
             * @member {gensee.v2.StatementClass} statement_class
             * @memberof gensee.v2.DatabaseEffect
             * @instance
             */
            DatabaseEffect.prototype.statement_class = 0;

            /**
             * DatabaseEffect table.
             * @member {string} table
             * @memberof gensee.v2.DatabaseEffect
             * @instance
             */
            DatabaseEffect.prototype.table = "";

            /**
             * Creates a new DatabaseEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.DatabaseEffect
             * @static
             * @param {gensee.v2.IDatabaseEffect=} [properties] Properties to set
             * @returns {gensee.v2.DatabaseEffect} DatabaseEffect instance
             */
            DatabaseEffect.create = function create(properties) {
                return new DatabaseEffect(properties);
            };

            /**
             * Encodes the specified DatabaseEffect message. Does not implicitly {@link gensee.v2.DatabaseEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.DatabaseEffect
             * @static
             * @param {gensee.v2.IDatabaseEffect} message DatabaseEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            DatabaseEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.engine != null && Object.hasOwnProperty.call(message, "engine"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.engine);
                if (message.database != null && Object.hasOwnProperty.call(message, "database"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.database);
                if (message.statement_class != null && Object.hasOwnProperty.call(message, "statement_class"))
                    writer.uint32(/* id 3, wireType 0 =*/24).int32(message.statement_class);
                if (message.table != null && Object.hasOwnProperty.call(message, "table"))
                    writer.uint32(/* id 4, wireType 2 =*/34).string(message.table);
                return writer;
            };

            /**
             * Decodes a DatabaseEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.DatabaseEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.DatabaseEffect} DatabaseEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DatabaseEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.DatabaseEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.engine = reader.string();
                            break;
                        }
                    case 2: {
                            message.database = reader.string();
                            break;
                        }
                    case 3: {
                            message.statement_class = reader.int32();
                            break;
                        }
                    case 4: {
                            message.table = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a DatabaseEffect message.
             * @function verify
             * @memberof gensee.v2.DatabaseEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            DatabaseEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.engine != null && Object.hasOwnProperty.call(message, "engine"))
                    if (!$util.isString(message.engine))
                        return "engine: string expected";
                if (message.database != null && Object.hasOwnProperty.call(message, "database"))
                    if (!$util.isString(message.database))
                        return "database: string expected";
                if (message.statement_class != null && Object.hasOwnProperty.call(message, "statement_class"))
                    switch (message.statement_class) {
                    default:
                        return "statement_class: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                    case 3:
                    case 4:
                        break;
                    }
                if (message.table != null && Object.hasOwnProperty.call(message, "table"))
                    if (!$util.isString(message.table))
                        return "table: string expected";
                return null;
            };

            /**
             * Creates a DatabaseEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.DatabaseEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.DatabaseEffect} DatabaseEffect
             */
            DatabaseEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.DatabaseEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.DatabaseEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.DatabaseEffect();
                if (object.engine != null)
                    message.engine = String(object.engine);
                if (object.database != null)
                    message.database = String(object.database);
                switch (object.statement_class) {
                default:
                    if (typeof object.statement_class === "number") {
                        message.statement_class = object.statement_class;
                        break;
                    }
                    break;
                case "STATEMENT_CLASS_UNSPECIFIED":
                case 0:
                    message.statement_class = 0;
                    break;
                case "STATEMENT_CLASS_READ":
                case 1:
                    message.statement_class = 1;
                    break;
                case "STATEMENT_CLASS_WRITE":
                case 2:
                    message.statement_class = 2;
                    break;
                case "STATEMENT_CLASS_DDL":
                case 3:
                    message.statement_class = 3;
                    break;
                case "STATEMENT_CLASS_ADMIN":
                case 4:
                    message.statement_class = 4;
                    break;
                }
                if (object.table != null)
                    message.table = String(object.table);
                return message;
            };

            /**
             * Creates a plain object from a DatabaseEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.DatabaseEffect
             * @static
             * @param {gensee.v2.DatabaseEffect} message DatabaseEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            DatabaseEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.engine = "";
                    object.database = "";
                    object.statement_class = options.enums === String ? "STATEMENT_CLASS_UNSPECIFIED" : 0;
                    object.table = "";
                }
                if (message.engine != null && Object.hasOwnProperty.call(message, "engine"))
                    object.engine = message.engine;
                if (message.database != null && Object.hasOwnProperty.call(message, "database"))
                    object.database = message.database;
                if (message.statement_class != null && Object.hasOwnProperty.call(message, "statement_class"))
                    object.statement_class = options.enums === String ? $root.gensee.v2.StatementClass[message.statement_class] === undefined ? message.statement_class : $root.gensee.v2.StatementClass[message.statement_class] : message.statement_class;
                if (message.table != null && Object.hasOwnProperty.call(message, "table"))
                    object.table = message.table;
                return object;
            };

            /**
             * Converts this DatabaseEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.DatabaseEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            DatabaseEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return DatabaseEffect;
        })();

        v2.PromotionEffect = (function() {

            /**
             * Properties of a PromotionEffect.
             * @memberof gensee.v2
             * @interface IPromotionEffect
             * @property {string|null} [artifact] PromotionEffect artifact
             * @property {string|null} [from_stage] PromotionEffect from_stage
             * @property {string|null} [to_stage] PromotionEffect to_stage
             */

            /**
             * Constructs a new PromotionEffect.
             * @memberof gensee.v2
             * @classdesc Represents a PromotionEffect.
             * @implements IPromotionEffect
             * @constructor
             * @param {gensee.v2.IPromotionEffect=} [properties] Properties to set
             */
            function PromotionEffect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * PromotionEffect artifact.
             * @member {string} artifact
             * @memberof gensee.v2.PromotionEffect
             * @instance
             */
            PromotionEffect.prototype.artifact = "";

            /**
             * PromotionEffect from_stage.
             * @member {string} from_stage
             * @memberof gensee.v2.PromotionEffect
             * @instance
             */
            PromotionEffect.prototype.from_stage = "";

            /**
             * PromotionEffect to_stage.
             * @member {string} to_stage
             * @memberof gensee.v2.PromotionEffect
             * @instance
             */
            PromotionEffect.prototype.to_stage = "";

            /**
             * Creates a new PromotionEffect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.PromotionEffect
             * @static
             * @param {gensee.v2.IPromotionEffect=} [properties] Properties to set
             * @returns {gensee.v2.PromotionEffect} PromotionEffect instance
             */
            PromotionEffect.create = function create(properties) {
                return new PromotionEffect(properties);
            };

            /**
             * Encodes the specified PromotionEffect message. Does not implicitly {@link gensee.v2.PromotionEffect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.PromotionEffect
             * @static
             * @param {gensee.v2.IPromotionEffect} message PromotionEffect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            PromotionEffect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.artifact != null && Object.hasOwnProperty.call(message, "artifact"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.artifact);
                if (message.from_stage != null && Object.hasOwnProperty.call(message, "from_stage"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.from_stage);
                if (message.to_stage != null && Object.hasOwnProperty.call(message, "to_stage"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.to_stage);
                return writer;
            };

            /**
             * Decodes a PromotionEffect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.PromotionEffect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.PromotionEffect} PromotionEffect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            PromotionEffect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.PromotionEffect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.artifact = reader.string();
                            break;
                        }
                    case 2: {
                            message.from_stage = reader.string();
                            break;
                        }
                    case 3: {
                            message.to_stage = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a PromotionEffect message.
             * @function verify
             * @memberof gensee.v2.PromotionEffect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            PromotionEffect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.artifact != null && Object.hasOwnProperty.call(message, "artifact"))
                    if (!$util.isString(message.artifact))
                        return "artifact: string expected";
                if (message.from_stage != null && Object.hasOwnProperty.call(message, "from_stage"))
                    if (!$util.isString(message.from_stage))
                        return "from_stage: string expected";
                if (message.to_stage != null && Object.hasOwnProperty.call(message, "to_stage"))
                    if (!$util.isString(message.to_stage))
                        return "to_stage: string expected";
                return null;
            };

            /**
             * Creates a PromotionEffect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.PromotionEffect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.PromotionEffect} PromotionEffect
             */
            PromotionEffect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.PromotionEffect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.PromotionEffect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.PromotionEffect();
                if (object.artifact != null)
                    message.artifact = String(object.artifact);
                if (object.from_stage != null)
                    message.from_stage = String(object.from_stage);
                if (object.to_stage != null)
                    message.to_stage = String(object.to_stage);
                return message;
            };

            /**
             * Creates a plain object from a PromotionEffect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.PromotionEffect
             * @static
             * @param {gensee.v2.PromotionEffect} message PromotionEffect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            PromotionEffect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.artifact = "";
                    object.from_stage = "";
                    object.to_stage = "";
                }
                if (message.artifact != null && Object.hasOwnProperty.call(message, "artifact"))
                    object.artifact = message.artifact;
                if (message.from_stage != null && Object.hasOwnProperty.call(message, "from_stage"))
                    object.from_stage = message.from_stage;
                if (message.to_stage != null && Object.hasOwnProperty.call(message, "to_stage"))
                    object.to_stage = message.to_stage;
                return object;
            };

            /**
             * Converts this PromotionEffect to JSON.
             * @function toJSON
             * @memberof gensee.v2.PromotionEffect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            PromotionEffect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return PromotionEffect;
        })();

        v2.Effect = (function() {

            /**
             * Properties of an Effect.
             * @memberof gensee.v2
             * @interface IEffect
             * @property {gensee.v2.INetworkEffect|null} [network] Effect network
             * @property {gensee.v2.IFileEffect|null} [file] Effect file
             * @property {gensee.v2.ISyscallEffect|null} [syscall] Effect syscall
             * @property {gensee.v2.ISecretEffect|null} [secret] Effect secret
             * @property {gensee.v2.ICloudIamEffect|null} [cloud_iam] Effect cloud_iam
             * @property {gensee.v2.IApplicationEffect|null} [application] Effect application
             * @property {gensee.v2.IDatabaseEffect|null} [database] Effect database
             * @property {gensee.v2.IPromotionEffect|null} [promotion] Effect promotion
             */

            /**
             * Constructs a new Effect.
             * @memberof gensee.v2
             * @classdesc Represents an Effect.
             * @implements IEffect
             * @constructor
             * @param {gensee.v2.IEffect=} [properties] Properties to set
             */
            function Effect(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * Effect network.
             * @member {gensee.v2.INetworkEffect|null|undefined} network
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.network = null;

            /**
             * Effect file.
             * @member {gensee.v2.IFileEffect|null|undefined} file
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.file = null;

            /**
             * Effect syscall.
             * @member {gensee.v2.ISyscallEffect|null|undefined} syscall
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.syscall = null;

            /**
             * Effect secret.
             * @member {gensee.v2.ISecretEffect|null|undefined} secret
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.secret = null;

            /**
             * Effect cloud_iam.
             * @member {gensee.v2.ICloudIamEffect|null|undefined} cloud_iam
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.cloud_iam = null;

            /**
             * Effect application.
             * @member {gensee.v2.IApplicationEffect|null|undefined} application
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.application = null;

            /**
             * Effect database.
             * @member {gensee.v2.IDatabaseEffect|null|undefined} database
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.database = null;

            /**
             * Effect promotion.
             * @member {gensee.v2.IPromotionEffect|null|undefined} promotion
             * @memberof gensee.v2.Effect
             * @instance
             */
            Effect.prototype.promotion = null;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            /**
             * Effect kind.
             * @member {"network"|"file"|"syscall"|"secret"|"cloud_iam"|"application"|"database"|"promotion"|undefined} kind
             * @memberof gensee.v2.Effect
             * @instance
             */
            Object.defineProperty(Effect.prototype, "kind", {
                get: $util.oneOfGetter($oneOfFields = ["network", "file", "syscall", "secret", "cloud_iam", "application", "database", "promotion"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Creates a new Effect instance using the specified properties.
             * @function create
             * @memberof gensee.v2.Effect
             * @static
             * @param {gensee.v2.IEffect=} [properties] Properties to set
             * @returns {gensee.v2.Effect} Effect instance
             */
            Effect.create = function create(properties) {
                return new Effect(properties);
            };

            /**
             * Encodes the specified Effect message. Does not implicitly {@link gensee.v2.Effect.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.Effect
             * @static
             * @param {gensee.v2.IEffect} message Effect message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Effect.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.network != null && Object.hasOwnProperty.call(message, "network"))
                    $root.gensee.v2.NetworkEffect.encode(message.network, writer.uint32(/* id 1, wireType 2 =*/10).fork(), q + 1).ldelim();
                if (message.file != null && Object.hasOwnProperty.call(message, "file"))
                    $root.gensee.v2.FileEffect.encode(message.file, writer.uint32(/* id 2, wireType 2 =*/18).fork(), q + 1).ldelim();
                if (message.syscall != null && Object.hasOwnProperty.call(message, "syscall"))
                    $root.gensee.v2.SyscallEffect.encode(message.syscall, writer.uint32(/* id 3, wireType 2 =*/26).fork(), q + 1).ldelim();
                if (message.secret != null && Object.hasOwnProperty.call(message, "secret"))
                    $root.gensee.v2.SecretEffect.encode(message.secret, writer.uint32(/* id 4, wireType 2 =*/34).fork(), q + 1).ldelim();
                if (message.cloud_iam != null && Object.hasOwnProperty.call(message, "cloud_iam"))
                    $root.gensee.v2.CloudIamEffect.encode(message.cloud_iam, writer.uint32(/* id 5, wireType 2 =*/42).fork(), q + 1).ldelim();
                if (message.application != null && Object.hasOwnProperty.call(message, "application"))
                    $root.gensee.v2.ApplicationEffect.encode(message.application, writer.uint32(/* id 6, wireType 2 =*/50).fork(), q + 1).ldelim();
                if (message.database != null && Object.hasOwnProperty.call(message, "database"))
                    $root.gensee.v2.DatabaseEffect.encode(message.database, writer.uint32(/* id 7, wireType 2 =*/58).fork(), q + 1).ldelim();
                if (message.promotion != null && Object.hasOwnProperty.call(message, "promotion"))
                    $root.gensee.v2.PromotionEffect.encode(message.promotion, writer.uint32(/* id 8, wireType 2 =*/66).fork(), q + 1).ldelim();
                return writer;
            };

            /**
             * Decodes an Effect message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.Effect
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.Effect} Effect
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Effect.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.Effect();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.network = $root.gensee.v2.NetworkEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 2: {
                            message.file = $root.gensee.v2.FileEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 3: {
                            message.syscall = $root.gensee.v2.SyscallEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 4: {
                            message.secret = $root.gensee.v2.SecretEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 5: {
                            message.cloud_iam = $root.gensee.v2.CloudIamEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 6: {
                            message.application = $root.gensee.v2.ApplicationEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 7: {
                            message.database = $root.gensee.v2.DatabaseEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 8: {
                            message.promotion = $root.gensee.v2.PromotionEffect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies an Effect message.
             * @function verify
             * @memberof gensee.v2.Effect
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            Effect.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                var properties = {};
                if (message.network != null && Object.hasOwnProperty.call(message, "network")) {
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.NetworkEffect.verify(message.network, long + 1);
                        if (error)
                            return "network." + error;
                    }
                }
                if (message.file != null && Object.hasOwnProperty.call(message, "file")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.FileEffect.verify(message.file, long + 1);
                        if (error)
                            return "file." + error;
                    }
                }
                if (message.syscall != null && Object.hasOwnProperty.call(message, "syscall")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.SyscallEffect.verify(message.syscall, long + 1);
                        if (error)
                            return "syscall." + error;
                    }
                }
                if (message.secret != null && Object.hasOwnProperty.call(message, "secret")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.SecretEffect.verify(message.secret, long + 1);
                        if (error)
                            return "secret." + error;
                    }
                }
                if (message.cloud_iam != null && Object.hasOwnProperty.call(message, "cloud_iam")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.CloudIamEffect.verify(message.cloud_iam, long + 1);
                        if (error)
                            return "cloud_iam." + error;
                    }
                }
                if (message.application != null && Object.hasOwnProperty.call(message, "application")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.ApplicationEffect.verify(message.application, long + 1);
                        if (error)
                            return "application." + error;
                    }
                }
                if (message.database != null && Object.hasOwnProperty.call(message, "database")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.DatabaseEffect.verify(message.database, long + 1);
                        if (error)
                            return "database." + error;
                    }
                }
                if (message.promotion != null && Object.hasOwnProperty.call(message, "promotion")) {
                    if (properties.kind === 1)
                        return "kind: multiple values";
                    properties.kind = 1;
                    {
                        var error = $root.gensee.v2.PromotionEffect.verify(message.promotion, long + 1);
                        if (error)
                            return "promotion." + error;
                    }
                }
                return null;
            };

            /**
             * Creates an Effect message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.Effect
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.Effect} Effect
             */
            Effect.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.Effect)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.Effect: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.Effect();
                if (object.network != null) {
                    if (!$util.isObject(object.network))
                        throw TypeError(".gensee.v2.Effect.network: object expected");
                    message.network = $root.gensee.v2.NetworkEffect.fromObject(object.network, long + 1);
                }
                if (object.file != null) {
                    if (!$util.isObject(object.file))
                        throw TypeError(".gensee.v2.Effect.file: object expected");
                    message.file = $root.gensee.v2.FileEffect.fromObject(object.file, long + 1);
                }
                if (object.syscall != null) {
                    if (!$util.isObject(object.syscall))
                        throw TypeError(".gensee.v2.Effect.syscall: object expected");
                    message.syscall = $root.gensee.v2.SyscallEffect.fromObject(object.syscall, long + 1);
                }
                if (object.secret != null) {
                    if (!$util.isObject(object.secret))
                        throw TypeError(".gensee.v2.Effect.secret: object expected");
                    message.secret = $root.gensee.v2.SecretEffect.fromObject(object.secret, long + 1);
                }
                if (object.cloud_iam != null) {
                    if (!$util.isObject(object.cloud_iam))
                        throw TypeError(".gensee.v2.Effect.cloud_iam: object expected");
                    message.cloud_iam = $root.gensee.v2.CloudIamEffect.fromObject(object.cloud_iam, long + 1);
                }
                if (object.application != null) {
                    if (!$util.isObject(object.application))
                        throw TypeError(".gensee.v2.Effect.application: object expected");
                    message.application = $root.gensee.v2.ApplicationEffect.fromObject(object.application, long + 1);
                }
                if (object.database != null) {
                    if (!$util.isObject(object.database))
                        throw TypeError(".gensee.v2.Effect.database: object expected");
                    message.database = $root.gensee.v2.DatabaseEffect.fromObject(object.database, long + 1);
                }
                if (object.promotion != null) {
                    if (!$util.isObject(object.promotion))
                        throw TypeError(".gensee.v2.Effect.promotion: object expected");
                    message.promotion = $root.gensee.v2.PromotionEffect.fromObject(object.promotion, long + 1);
                }
                return message;
            };

            /**
             * Creates a plain object from an Effect message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.Effect
             * @static
             * @param {gensee.v2.Effect} message Effect
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            Effect.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (message.network != null && Object.hasOwnProperty.call(message, "network")) {
                    object.network = $root.gensee.v2.NetworkEffect.toObject(message.network, options, q + 1);
                    if (options.oneofs)
                        object.kind = "network";
                }
                if (message.file != null && Object.hasOwnProperty.call(message, "file")) {
                    object.file = $root.gensee.v2.FileEffect.toObject(message.file, options, q + 1);
                    if (options.oneofs)
                        object.kind = "file";
                }
                if (message.syscall != null && Object.hasOwnProperty.call(message, "syscall")) {
                    object.syscall = $root.gensee.v2.SyscallEffect.toObject(message.syscall, options, q + 1);
                    if (options.oneofs)
                        object.kind = "syscall";
                }
                if (message.secret != null && Object.hasOwnProperty.call(message, "secret")) {
                    object.secret = $root.gensee.v2.SecretEffect.toObject(message.secret, options, q + 1);
                    if (options.oneofs)
                        object.kind = "secret";
                }
                if (message.cloud_iam != null && Object.hasOwnProperty.call(message, "cloud_iam")) {
                    object.cloud_iam = $root.gensee.v2.CloudIamEffect.toObject(message.cloud_iam, options, q + 1);
                    if (options.oneofs)
                        object.kind = "cloud_iam";
                }
                if (message.application != null && Object.hasOwnProperty.call(message, "application")) {
                    object.application = $root.gensee.v2.ApplicationEffect.toObject(message.application, options, q + 1);
                    if (options.oneofs)
                        object.kind = "application";
                }
                if (message.database != null && Object.hasOwnProperty.call(message, "database")) {
                    object.database = $root.gensee.v2.DatabaseEffect.toObject(message.database, options, q + 1);
                    if (options.oneofs)
                        object.kind = "database";
                }
                if (message.promotion != null && Object.hasOwnProperty.call(message, "promotion")) {
                    object.promotion = $root.gensee.v2.PromotionEffect.toObject(message.promotion, options, q + 1);
                    if (options.oneofs)
                        object.kind = "promotion";
                }
                return object;
            };

            /**
             * Converts this Effect to JSON.
             * @function toJSON
             * @memberof gensee.v2.Effect
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            Effect.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return Effect;
        })();

        v2.CapabilityFault = (function() {

            /**
             * Properties of a CapabilityFault.
             * @memberof gensee.v2
             * @interface ICapabilityFault
             * @property {number|null} [schema] CapabilityFault schema
             * @property {string|null} [operation_id] CapabilityFault operation_id
             * @property {string|null} [fault_id] CapabilityFault fault_id
             * @property {gensee.v2.ISubject|null} [subject] CapabilityFault subject
             * @property {gensee.v2.IEffect|null} [effect] CapabilityFault effect
             * @property {gensee.v2.Source|null} [source] CapabilityFault source
             * @property {number|Long|null} [observed_at_boot_ns] CapabilityFault observed_at_boot_ns
             * @property {number|Long|null} [cgroup_id] CapabilityFault cgroup_id
             * @property {gensee.v2.IClientRefusal|null} [client_refusal] CapabilityFault client_refusal
             */

            /**
             * Constructs a new CapabilityFault.
             * @memberof gensee.v2
             * @classdesc Represents a CapabilityFault.
             * @implements ICapabilityFault
             * @constructor
             * @param {gensee.v2.ICapabilityFault=} [properties] Properties to set
             */
            function CapabilityFault(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * CapabilityFault schema.
             * @member {number} schema
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.schema = 0;

            /**
             * CapabilityFault operation_id.
             * @member {string} operation_id
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.operation_id = "";

            /**
             * CapabilityFault fault_id.
             * @member {string} fault_id
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.fault_id = "";

            /**
             * CapabilityFault subject.
             * @member {gensee.v2.ISubject|null|undefined} subject
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.subject = null;

            /**
             * CapabilityFault effect.
             * @member {gensee.v2.IEffect|null|undefined} effect
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.effect = null;

            /**
             * CapabilityFault source.
             * @member {gensee.v2.Source} source
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.source = 0;

            /**
             * CapabilityFault observed_at_boot_ns.
             * @member {number|Long} observed_at_boot_ns
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.observed_at_boot_ns = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * CapabilityFault cgroup_id.
             * @member {number|Long} cgroup_id
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.cgroup_id = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * CapabilityFault client_refusal.
             * @member {gensee.v2.IClientRefusal|null|undefined} client_refusal
             * @memberof gensee.v2.CapabilityFault
             * @instance
             */
            CapabilityFault.prototype.client_refusal = null;

            /**
             * Creates a new CapabilityFault instance using the specified properties.
             * @function create
             * @memberof gensee.v2.CapabilityFault
             * @static
             * @param {gensee.v2.ICapabilityFault=} [properties] Properties to set
             * @returns {gensee.v2.CapabilityFault} CapabilityFault instance
             */
            CapabilityFault.create = function create(properties) {
                return new CapabilityFault(properties);
            };

            /**
             * Encodes the specified CapabilityFault message. Does not implicitly {@link gensee.v2.CapabilityFault.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.CapabilityFault
             * @static
             * @param {gensee.v2.ICapabilityFault} message CapabilityFault message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            CapabilityFault.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.schema);
                if (message.operation_id != null && Object.hasOwnProperty.call(message, "operation_id"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.operation_id);
                if (message.fault_id != null && Object.hasOwnProperty.call(message, "fault_id"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.fault_id);
                if (message.subject != null && Object.hasOwnProperty.call(message, "subject"))
                    $root.gensee.v2.Subject.encode(message.subject, writer.uint32(/* id 4, wireType 2 =*/34).fork(), q + 1).ldelim();
                if (message.effect != null && Object.hasOwnProperty.call(message, "effect"))
                    $root.gensee.v2.Effect.encode(message.effect, writer.uint32(/* id 5, wireType 2 =*/42).fork(), q + 1).ldelim();
                if (message.source != null && Object.hasOwnProperty.call(message, "source"))
                    writer.uint32(/* id 6, wireType 0 =*/48).int32(message.source);
                if (message.observed_at_boot_ns != null && Object.hasOwnProperty.call(message, "observed_at_boot_ns"))
                    writer.uint32(/* id 7, wireType 0 =*/56).uint64(message.observed_at_boot_ns);
                if (message.cgroup_id != null && Object.hasOwnProperty.call(message, "cgroup_id"))
                    writer.uint32(/* id 8, wireType 0 =*/64).uint64(message.cgroup_id);
                if (message.client_refusal != null && Object.hasOwnProperty.call(message, "client_refusal"))
                    $root.gensee.v2.ClientRefusal.encode(message.client_refusal, writer.uint32(/* id 9, wireType 2 =*/74).fork(), q + 1).ldelim();
                return writer;
            };

            /**
             * Decodes a CapabilityFault message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.CapabilityFault
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.CapabilityFault} CapabilityFault
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            CapabilityFault.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.CapabilityFault();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.schema = reader.uint32();
                            break;
                        }
                    case 2: {
                            message.operation_id = reader.string();
                            break;
                        }
                    case 3: {
                            message.fault_id = reader.string();
                            break;
                        }
                    case 4: {
                            message.subject = $root.gensee.v2.Subject.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 5: {
                            message.effect = $root.gensee.v2.Effect.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 6: {
                            message.source = reader.int32();
                            break;
                        }
                    case 7: {
                            message.observed_at_boot_ns = reader.uint64();
                            break;
                        }
                    case 8: {
                            message.cgroup_id = reader.uint64();
                            break;
                        }
                    case 9: {
                            message.client_refusal = $root.gensee.v2.ClientRefusal.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a CapabilityFault message.
             * @function verify
             * @memberof gensee.v2.CapabilityFault
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            CapabilityFault.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    if (!$util.isInteger(message.schema))
                        return "schema: integer expected";
                if (message.operation_id != null && Object.hasOwnProperty.call(message, "operation_id"))
                    if (!$util.isString(message.operation_id))
                        return "operation_id: string expected";
                if (message.fault_id != null && Object.hasOwnProperty.call(message, "fault_id"))
                    if (!$util.isString(message.fault_id))
                        return "fault_id: string expected";
                if (message.subject != null && Object.hasOwnProperty.call(message, "subject")) {
                    var error = $root.gensee.v2.Subject.verify(message.subject, long + 1);
                    if (error)
                        return "subject." + error;
                }
                if (message.effect != null && Object.hasOwnProperty.call(message, "effect")) {
                    var error = $root.gensee.v2.Effect.verify(message.effect, long + 1);
                    if (error)
                        return "effect." + error;
                }
                if (message.source != null && Object.hasOwnProperty.call(message, "source"))
                    switch (message.source) {
                    default:
                        return "source: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                    case 3:
                    case 4:
                    case 5:
                        break;
                    }
                if (message.observed_at_boot_ns != null && Object.hasOwnProperty.call(message, "observed_at_boot_ns"))
                    if (!$util.isInteger(message.observed_at_boot_ns) && !(message.observed_at_boot_ns && $util.isInteger(message.observed_at_boot_ns.low) && $util.isInteger(message.observed_at_boot_ns.high)))
                        return "observed_at_boot_ns: integer|Long expected";
                if (message.cgroup_id != null && Object.hasOwnProperty.call(message, "cgroup_id"))
                    if (!$util.isInteger(message.cgroup_id) && !(message.cgroup_id && $util.isInteger(message.cgroup_id.low) && $util.isInteger(message.cgroup_id.high)))
                        return "cgroup_id: integer|Long expected";
                if (message.client_refusal != null && Object.hasOwnProperty.call(message, "client_refusal")) {
                    var error = $root.gensee.v2.ClientRefusal.verify(message.client_refusal, long + 1);
                    if (error)
                        return "client_refusal." + error;
                }
                return null;
            };

            /**
             * Creates a CapabilityFault message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.CapabilityFault
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.CapabilityFault} CapabilityFault
             */
            CapabilityFault.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.CapabilityFault)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.CapabilityFault: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.CapabilityFault();
                if (object.schema != null)
                    message.schema = object.schema >>> 0;
                if (object.operation_id != null)
                    message.operation_id = String(object.operation_id);
                if (object.fault_id != null)
                    message.fault_id = String(object.fault_id);
                if (object.subject != null) {
                    if (!$util.isObject(object.subject))
                        throw TypeError(".gensee.v2.CapabilityFault.subject: object expected");
                    message.subject = $root.gensee.v2.Subject.fromObject(object.subject, long + 1);
                }
                if (object.effect != null) {
                    if (!$util.isObject(object.effect))
                        throw TypeError(".gensee.v2.CapabilityFault.effect: object expected");
                    message.effect = $root.gensee.v2.Effect.fromObject(object.effect, long + 1);
                }
                switch (object.source) {
                default:
                    if (typeof object.source === "number") {
                        message.source = object.source;
                        break;
                    }
                    break;
                case "SOURCE_UNSPECIFIED":
                case 0:
                    message.source = 0;
                    break;
                case "SOURCE_SECCOMP_NOTIFY":
                case 1:
                    message.source = 1;
                    break;
                case "SOURCE_CGROUP_HOOK":
                case 2:
                    message.source = 2;
                    break;
                case "SOURCE_MANUAL":
                case 3:
                    message.source = 3;
                    break;
                case "SOURCE_PEER_GATEWAY":
                case 4:
                    message.source = 4;
                    break;
                case "SOURCE_EXECUTOR":
                case 5:
                    message.source = 5;
                    break;
                }
                if (object.observed_at_boot_ns != null)
                    if ($util.Long)
                        message.observed_at_boot_ns = $util.Long.fromValue(object.observed_at_boot_ns, true);
                    else if (typeof object.observed_at_boot_ns === "string")
                        message.observed_at_boot_ns = parseInt(object.observed_at_boot_ns, 10);
                    else if (typeof object.observed_at_boot_ns === "number")
                        message.observed_at_boot_ns = object.observed_at_boot_ns;
                    else if (typeof object.observed_at_boot_ns === "object")
                        message.observed_at_boot_ns = new $util.LongBits(object.observed_at_boot_ns.low >>> 0, object.observed_at_boot_ns.high >>> 0).toNumber(true);
                if (object.cgroup_id != null)
                    if ($util.Long)
                        message.cgroup_id = $util.Long.fromValue(object.cgroup_id, true);
                    else if (typeof object.cgroup_id === "string")
                        message.cgroup_id = parseInt(object.cgroup_id, 10);
                    else if (typeof object.cgroup_id === "number")
                        message.cgroup_id = object.cgroup_id;
                    else if (typeof object.cgroup_id === "object")
                        message.cgroup_id = new $util.LongBits(object.cgroup_id.low >>> 0, object.cgroup_id.high >>> 0).toNumber(true);
                if (object.client_refusal != null) {
                    if (!$util.isObject(object.client_refusal))
                        throw TypeError(".gensee.v2.CapabilityFault.client_refusal: object expected");
                    message.client_refusal = $root.gensee.v2.ClientRefusal.fromObject(object.client_refusal, long + 1);
                }
                return message;
            };

            /**
             * Creates a plain object from a CapabilityFault message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.CapabilityFault
             * @static
             * @param {gensee.v2.CapabilityFault} message CapabilityFault
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            CapabilityFault.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.schema = 0;
                    object.operation_id = "";
                    object.fault_id = "";
                    object.subject = null;
                    object.effect = null;
                    object.source = options.enums === String ? "SOURCE_UNSPECIFIED" : 0;
                    if ($util.Long) {
                        var long = new $util.Long(0, 0, true);
                        object.observed_at_boot_ns = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                    } else
                        object.observed_at_boot_ns = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                    if ($util.Long) {
                        var long = new $util.Long(0, 0, true);
                        object.cgroup_id = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                    } else
                        object.cgroup_id = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                    object.client_refusal = null;
                }
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    object.schema = message.schema;
                if (message.operation_id != null && Object.hasOwnProperty.call(message, "operation_id"))
                    object.operation_id = message.operation_id;
                if (message.fault_id != null && Object.hasOwnProperty.call(message, "fault_id"))
                    object.fault_id = message.fault_id;
                if (message.subject != null && Object.hasOwnProperty.call(message, "subject"))
                    object.subject = $root.gensee.v2.Subject.toObject(message.subject, options, q + 1);
                if (message.effect != null && Object.hasOwnProperty.call(message, "effect"))
                    object.effect = $root.gensee.v2.Effect.toObject(message.effect, options, q + 1);
                if (message.source != null && Object.hasOwnProperty.call(message, "source"))
                    object.source = options.enums === String ? $root.gensee.v2.Source[message.source] === undefined ? message.source : $root.gensee.v2.Source[message.source] : message.source;
                if (message.observed_at_boot_ns != null && Object.hasOwnProperty.call(message, "observed_at_boot_ns"))
                    if (typeof BigInt !== "undefined" && options.longs === BigInt)
                        object.observed_at_boot_ns = typeof message.observed_at_boot_ns === "number" ? BigInt(message.observed_at_boot_ns) : $util.Long.fromBits(message.observed_at_boot_ns.low >>> 0, message.observed_at_boot_ns.high >>> 0, true).toBigInt();
                    else if (typeof message.observed_at_boot_ns === "number")
                        object.observed_at_boot_ns = options.longs === String ? String(message.observed_at_boot_ns) : message.observed_at_boot_ns;
                    else
                        object.observed_at_boot_ns = options.longs === String ? $util.Long.prototype.toString.call(message.observed_at_boot_ns) : options.longs === Number ? new $util.LongBits(message.observed_at_boot_ns.low >>> 0, message.observed_at_boot_ns.high >>> 0).toNumber(true) : message.observed_at_boot_ns;
                if (message.cgroup_id != null && Object.hasOwnProperty.call(message, "cgroup_id"))
                    if (typeof BigInt !== "undefined" && options.longs === BigInt)
                        object.cgroup_id = typeof message.cgroup_id === "number" ? BigInt(message.cgroup_id) : $util.Long.fromBits(message.cgroup_id.low >>> 0, message.cgroup_id.high >>> 0, true).toBigInt();
                    else if (typeof message.cgroup_id === "number")
                        object.cgroup_id = options.longs === String ? String(message.cgroup_id) : message.cgroup_id;
                    else
                        object.cgroup_id = options.longs === String ? $util.Long.prototype.toString.call(message.cgroup_id) : options.longs === Number ? new $util.LongBits(message.cgroup_id.low >>> 0, message.cgroup_id.high >>> 0).toNumber(true) : message.cgroup_id;
                if (message.client_refusal != null && Object.hasOwnProperty.call(message, "client_refusal"))
                    object.client_refusal = $root.gensee.v2.ClientRefusal.toObject(message.client_refusal, options, q + 1);
                return object;
            };

            /**
             * Converts this CapabilityFault to JSON.
             * @function toJSON
             * @memberof gensee.v2.CapabilityFault
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            CapabilityFault.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return CapabilityFault;
        })();

        v2.ClientRefusal = (function() {

            /**
             * Properties of a ClientRefusal.
             * @memberof gensee.v2
             * @interface IClientRefusal
             * @property {string|null} [code] ClientRefusal code
             * @property {string|null} [detail] ClientRefusal detail
             */

            /**
             * Constructs a new ClientRefusal.
             * @memberof gensee.v2
             * @classdesc Represents a ClientRefusal.
             * @implements IClientRefusal
             * @constructor
             * @param {gensee.v2.IClientRefusal=} [properties] Properties to set
             */
            function ClientRefusal(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ClientRefusal code.
             * @member {string} code
             * @memberof gensee.v2.ClientRefusal
             * @instance
             */
            ClientRefusal.prototype.code = "";

            /**
             * ClientRefusal detail.
             * @member {string} detail
             * @memberof gensee.v2.ClientRefusal
             * @instance
             */
            ClientRefusal.prototype.detail = "";

            /**
             * Creates a new ClientRefusal instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ClientRefusal
             * @static
             * @param {gensee.v2.IClientRefusal=} [properties] Properties to set
             * @returns {gensee.v2.ClientRefusal} ClientRefusal instance
             */
            ClientRefusal.create = function create(properties) {
                return new ClientRefusal(properties);
            };

            /**
             * Encodes the specified ClientRefusal message. Does not implicitly {@link gensee.v2.ClientRefusal.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ClientRefusal
             * @static
             * @param {gensee.v2.IClientRefusal} message ClientRefusal message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ClientRefusal.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.code != null && Object.hasOwnProperty.call(message, "code"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.code);
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.detail);
                return writer;
            };

            /**
             * Decodes a ClientRefusal message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ClientRefusal
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ClientRefusal} ClientRefusal
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ClientRefusal.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.ClientRefusal();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.code = reader.string();
                            break;
                        }
                    case 2: {
                            message.detail = reader.string();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a ClientRefusal message.
             * @function verify
             * @memberof gensee.v2.ClientRefusal
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ClientRefusal.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.code != null && Object.hasOwnProperty.call(message, "code"))
                    if (!$util.isString(message.code))
                        return "code: string expected";
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    if (!$util.isString(message.detail))
                        return "detail: string expected";
                return null;
            };

            /**
             * Creates a ClientRefusal message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ClientRefusal
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ClientRefusal} ClientRefusal
             */
            ClientRefusal.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ClientRefusal)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ClientRefusal: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ClientRefusal();
                if (object.code != null)
                    message.code = String(object.code);
                if (object.detail != null)
                    message.detail = String(object.detail);
                return message;
            };

            /**
             * Creates a plain object from a ClientRefusal message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ClientRefusal
             * @static
             * @param {gensee.v2.ClientRefusal} message ClientRefusal
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ClientRefusal.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.code = "";
                    object.detail = "";
                }
                if (message.code != null && Object.hasOwnProperty.call(message, "code"))
                    object.code = message.code;
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    object.detail = message.detail;
                return object;
            };

            /**
             * Converts this ClientRefusal to JSON.
             * @function toJSON
             * @memberof gensee.v2.ClientRefusal
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ClientRefusal.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ClientRefusal;
        })();

        v2.Lease = (function() {

            /**
             * Properties of a Lease.
             * @memberof gensee.v2
             * @interface ILease
             * @property {number|Long|null} [generation] Lease generation
             * @property {gensee.v2.Family|null} [family] Lease family
             * @property {gensee.v2.Protocol|null} [protocol] Lease protocol
             * @property {string|null} [address] Lease address
             * @property {number|null} [port] Lease port
             * @property {number|Long|null} [expires_at_boot_ns] Lease expires_at_boot_ns
             * @property {number|null} [max_uses] Lease max_uses
             */

            /**
             * Constructs a new Lease.
             * @memberof gensee.v2
             * @classdesc Represents a Lease.
             * @implements ILease
             * @constructor
             * @param {gensee.v2.ILease=} [properties] Properties to set
             */
            function Lease(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * Lease generation.
             * @member {number|Long} generation
             * @memberof gensee.v2.Lease
             * @instance
             */
            Lease.prototype.generation = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Lease family.
             * @member {gensee.v2.Family} family
             * @memberof gensee.v2.Lease
             * @instance
             */
            Lease.prototype.family = 0;

            /**
             * Lease protocol.
             * @member {gensee.v2.Protocol} protocol
             * @memberof gensee.v2.Lease
             * @instance
             */
            Lease.prototype.protocol = 0;

            /**
             * Lease address.
             * @member {string} address
             * @memberof gensee.v2.Lease
             * @instance
             */
            Lease.prototype.address = "";

            /**
             * Lease port.
             * @member {number} port
             * @memberof gensee.v2.Lease
             * @instance
             */
            Lease.prototype.port = 0;

            /**
             * Lease expires_at_boot_ns.
             * @member {number|Long} expires_at_boot_ns
             * @memberof gensee.v2.Lease
             * @instance
             */
            Lease.prototype.expires_at_boot_ns = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Lease max_uses.
             * @member {number} max_uses
             * @memberof gensee.v2.Lease
             * @instance
             */
            Lease.prototype.max_uses = 0;

            /**
             * Creates a new Lease instance using the specified properties.
             * @function create
             * @memberof gensee.v2.Lease
             * @static
             * @param {gensee.v2.ILease=} [properties] Properties to set
             * @returns {gensee.v2.Lease} Lease instance
             */
            Lease.create = function create(properties) {
                return new Lease(properties);
            };

            /**
             * Encodes the specified Lease message. Does not implicitly {@link gensee.v2.Lease.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.Lease
             * @static
             * @param {gensee.v2.ILease} message Lease message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Lease.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.generation != null && Object.hasOwnProperty.call(message, "generation"))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint64(message.generation);
                if (message.family != null && Object.hasOwnProperty.call(message, "family"))
                    writer.uint32(/* id 2, wireType 0 =*/16).int32(message.family);
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    writer.uint32(/* id 3, wireType 0 =*/24).int32(message.protocol);
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    writer.uint32(/* id 4, wireType 2 =*/34).string(message.address);
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.port);
                if (message.expires_at_boot_ns != null && Object.hasOwnProperty.call(message, "expires_at_boot_ns"))
                    writer.uint32(/* id 6, wireType 0 =*/48).uint64(message.expires_at_boot_ns);
                if (message.max_uses != null && Object.hasOwnProperty.call(message, "max_uses"))
                    writer.uint32(/* id 7, wireType 0 =*/56).uint32(message.max_uses);
                return writer;
            };

            /**
             * Decodes a Lease message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.Lease
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.Lease} Lease
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Lease.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.Lease();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.generation = reader.uint64();
                            break;
                        }
                    case 2: {
                            message.family = reader.int32();
                            break;
                        }
                    case 3: {
                            message.protocol = reader.int32();
                            break;
                        }
                    case 4: {
                            message.address = reader.string();
                            break;
                        }
                    case 5: {
                            message.port = reader.uint32();
                            break;
                        }
                    case 6: {
                            message.expires_at_boot_ns = reader.uint64();
                            break;
                        }
                    case 7: {
                            message.max_uses = reader.uint32();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a Lease message.
             * @function verify
             * @memberof gensee.v2.Lease
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            Lease.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.generation != null && Object.hasOwnProperty.call(message, "generation"))
                    if (!$util.isInteger(message.generation) && !(message.generation && $util.isInteger(message.generation.low) && $util.isInteger(message.generation.high)))
                        return "generation: integer|Long expected";
                if (message.family != null && Object.hasOwnProperty.call(message, "family"))
                    switch (message.family) {
                    default:
                        return "family: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                        break;
                    }
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    switch (message.protocol) {
                    default:
                        return "protocol: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                        break;
                    }
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    if (!$util.isString(message.address))
                        return "address: string expected";
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    if (!$util.isInteger(message.port))
                        return "port: integer expected";
                if (message.expires_at_boot_ns != null && Object.hasOwnProperty.call(message, "expires_at_boot_ns"))
                    if (!$util.isInteger(message.expires_at_boot_ns) && !(message.expires_at_boot_ns && $util.isInteger(message.expires_at_boot_ns.low) && $util.isInteger(message.expires_at_boot_ns.high)))
                        return "expires_at_boot_ns: integer|Long expected";
                if (message.max_uses != null && Object.hasOwnProperty.call(message, "max_uses"))
                    if (!$util.isInteger(message.max_uses))
                        return "max_uses: integer expected";
                return null;
            };

            /**
             * Creates a Lease message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.Lease
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.Lease} Lease
             */
            Lease.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.Lease)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.Lease: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.Lease();
                if (object.generation != null)
                    if ($util.Long)
                        message.generation = $util.Long.fromValue(object.generation, true);
                    else if (typeof object.generation === "string")
                        message.generation = parseInt(object.generation, 10);
                    else if (typeof object.generation === "number")
                        message.generation = object.generation;
                    else if (typeof object.generation === "object")
                        message.generation = new $util.LongBits(object.generation.low >>> 0, object.generation.high >>> 0).toNumber(true);
                switch (object.family) {
                default:
                    if (typeof object.family === "number") {
                        message.family = object.family;
                        break;
                    }
                    break;
                case "FAMILY_UNSPECIFIED":
                case 0:
                    message.family = 0;
                    break;
                case "FAMILY_IPV4":
                case 1:
                    message.family = 1;
                    break;
                case "FAMILY_IPV6":
                case 2:
                    message.family = 2;
                    break;
                }
                switch (object.protocol) {
                default:
                    if (typeof object.protocol === "number") {
                        message.protocol = object.protocol;
                        break;
                    }
                    break;
                case "PROTOCOL_UNSPECIFIED":
                case 0:
                    message.protocol = 0;
                    break;
                case "PROTOCOL_TCP":
                case 1:
                    message.protocol = 1;
                    break;
                case "PROTOCOL_UDP":
                case 2:
                    message.protocol = 2;
                    break;
                }
                if (object.address != null)
                    message.address = String(object.address);
                if (object.port != null)
                    message.port = object.port >>> 0;
                if (object.expires_at_boot_ns != null)
                    if ($util.Long)
                        message.expires_at_boot_ns = $util.Long.fromValue(object.expires_at_boot_ns, true);
                    else if (typeof object.expires_at_boot_ns === "string")
                        message.expires_at_boot_ns = parseInt(object.expires_at_boot_ns, 10);
                    else if (typeof object.expires_at_boot_ns === "number")
                        message.expires_at_boot_ns = object.expires_at_boot_ns;
                    else if (typeof object.expires_at_boot_ns === "object")
                        message.expires_at_boot_ns = new $util.LongBits(object.expires_at_boot_ns.low >>> 0, object.expires_at_boot_ns.high >>> 0).toNumber(true);
                if (object.max_uses != null)
                    message.max_uses = object.max_uses >>> 0;
                return message;
            };

            /**
             * Creates a plain object from a Lease message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.Lease
             * @static
             * @param {gensee.v2.Lease} message Lease
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            Lease.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    if ($util.Long) {
                        var long = new $util.Long(0, 0, true);
                        object.generation = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                    } else
                        object.generation = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                    object.family = options.enums === String ? "FAMILY_UNSPECIFIED" : 0;
                    object.protocol = options.enums === String ? "PROTOCOL_UNSPECIFIED" : 0;
                    object.address = "";
                    object.port = 0;
                    if ($util.Long) {
                        var long = new $util.Long(0, 0, true);
                        object.expires_at_boot_ns = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                    } else
                        object.expires_at_boot_ns = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                    object.max_uses = 0;
                }
                if (message.generation != null && Object.hasOwnProperty.call(message, "generation"))
                    if (typeof BigInt !== "undefined" && options.longs === BigInt)
                        object.generation = typeof message.generation === "number" ? BigInt(message.generation) : $util.Long.fromBits(message.generation.low >>> 0, message.generation.high >>> 0, true).toBigInt();
                    else if (typeof message.generation === "number")
                        object.generation = options.longs === String ? String(message.generation) : message.generation;
                    else
                        object.generation = options.longs === String ? $util.Long.prototype.toString.call(message.generation) : options.longs === Number ? new $util.LongBits(message.generation.low >>> 0, message.generation.high >>> 0).toNumber(true) : message.generation;
                if (message.family != null && Object.hasOwnProperty.call(message, "family"))
                    object.family = options.enums === String ? $root.gensee.v2.Family[message.family] === undefined ? message.family : $root.gensee.v2.Family[message.family] : message.family;
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    object.protocol = options.enums === String ? $root.gensee.v2.Protocol[message.protocol] === undefined ? message.protocol : $root.gensee.v2.Protocol[message.protocol] : message.protocol;
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    object.address = message.address;
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    object.port = message.port;
                if (message.expires_at_boot_ns != null && Object.hasOwnProperty.call(message, "expires_at_boot_ns"))
                    if (typeof BigInt !== "undefined" && options.longs === BigInt)
                        object.expires_at_boot_ns = typeof message.expires_at_boot_ns === "number" ? BigInt(message.expires_at_boot_ns) : $util.Long.fromBits(message.expires_at_boot_ns.low >>> 0, message.expires_at_boot_ns.high >>> 0, true).toBigInt();
                    else if (typeof message.expires_at_boot_ns === "number")
                        object.expires_at_boot_ns = options.longs === String ? String(message.expires_at_boot_ns) : message.expires_at_boot_ns;
                    else
                        object.expires_at_boot_ns = options.longs === String ? $util.Long.prototype.toString.call(message.expires_at_boot_ns) : options.longs === Number ? new $util.LongBits(message.expires_at_boot_ns.low >>> 0, message.expires_at_boot_ns.high >>> 0).toNumber(true) : message.expires_at_boot_ns;
                if (message.max_uses != null && Object.hasOwnProperty.call(message, "max_uses"))
                    object.max_uses = message.max_uses;
                return object;
            };

            /**
             * Converts this Lease to JSON.
             * @function toJSON
             * @memberof gensee.v2.Lease
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            Lease.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return Lease;
        })();

        v2.Resolution = (function() {

            /**
             * Properties of a Resolution.
             * @memberof gensee.v2
             * @interface IResolution
             * @property {string|null} [fault_id] Resolution fault_id
             * @property {gensee.v2.Action|null} [action] Resolution action
             * @property {string|null} [reason] Resolution reason
             * @property {gensee.v2.ILease|null} [lease] Resolution lease
             * @property {string|null} [delegate_to] Resolution delegate_to
             * @property {Uint8Array|null} [mac] Resolution mac
             */

            /**
             * Constructs a new Resolution.
             * @memberof gensee.v2
             * @classdesc Represents a Resolution.
             * @implements IResolution
             * @constructor
             * @param {gensee.v2.IResolution=} [properties] Properties to set
             */
            function Resolution(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * Resolution fault_id.
             * @member {string} fault_id
             * @memberof gensee.v2.Resolution
             * @instance
             */
            Resolution.prototype.fault_id = "";

            /**
             * Resolution action.
             * @member {gensee.v2.Action} action
             * @memberof gensee.v2.Resolution
             * @instance
             */
            Resolution.prototype.action = 0;

            /**
             * Resolution reason.
             * @member {string} reason
             * @memberof gensee.v2.Resolution
             * @instance
             */
            Resolution.prototype.reason = "";

            /**
             * Resolution lease.
             * @member {gensee.v2.ILease|null|undefined} lease
             * @memberof gensee.v2.Resolution
             * @instance
             */
            Resolution.prototype.lease = null;

            /**
             * Resolution delegate_to.
             * @member {string} delegate_to
             * @memberof gensee.v2.Resolution
             * @instance
             */
            Resolution.prototype.delegate_to = "";

            /**
             * Resolution mac.
             * @member {Uint8Array} mac
             * @memberof gensee.v2.Resolution
             * @instance
             */
            Resolution.prototype.mac = $util.newBuffer([]);

            /**
             * Creates a new Resolution instance using the specified properties.
             * @function create
             * @memberof gensee.v2.Resolution
             * @static
             * @param {gensee.v2.IResolution=} [properties] Properties to set
             * @returns {gensee.v2.Resolution} Resolution instance
             */
            Resolution.create = function create(properties) {
                return new Resolution(properties);
            };

            /**
             * Encodes the specified Resolution message. Does not implicitly {@link gensee.v2.Resolution.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.Resolution
             * @static
             * @param {gensee.v2.IResolution} message Resolution message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Resolution.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.fault_id != null && Object.hasOwnProperty.call(message, "fault_id"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.fault_id);
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    writer.uint32(/* id 2, wireType 0 =*/16).int32(message.action);
                if (message.reason != null && Object.hasOwnProperty.call(message, "reason"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.reason);
                if (message.lease != null && Object.hasOwnProperty.call(message, "lease"))
                    $root.gensee.v2.Lease.encode(message.lease, writer.uint32(/* id 4, wireType 2 =*/34).fork(), q + 1).ldelim();
                if (message.delegate_to != null && Object.hasOwnProperty.call(message, "delegate_to"))
                    writer.uint32(/* id 5, wireType 2 =*/42).string(message.delegate_to);
                if (message.mac != null && Object.hasOwnProperty.call(message, "mac"))
                    writer.uint32(/* id 6, wireType 2 =*/50).bytes(message.mac);
                return writer;
            };

            /**
             * Decodes a Resolution message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.Resolution
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.Resolution} Resolution
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Resolution.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.gensee.v2.Resolution();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.fault_id = reader.string();
                            break;
                        }
                    case 2: {
                            message.action = reader.int32();
                            break;
                        }
                    case 3: {
                            message.reason = reader.string();
                            break;
                        }
                    case 4: {
                            message.lease = $root.gensee.v2.Lease.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 5: {
                            message.delegate_to = reader.string();
                            break;
                        }
                    case 6: {
                            message.mac = reader.bytes();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            /**
             * Verifies a Resolution message.
             * @function verify
             * @memberof gensee.v2.Resolution
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            Resolution.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.fault_id != null && Object.hasOwnProperty.call(message, "fault_id"))
                    if (!$util.isString(message.fault_id))
                        return "fault_id: string expected";
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    switch (message.action) {
                    default:
                        return "action: enum value expected";
                    case 0:
                    case 1:
                    case 2:
                    case 3:
                    case 4:
                        break;
                    }
                if (message.reason != null && Object.hasOwnProperty.call(message, "reason"))
                    if (!$util.isString(message.reason))
                        return "reason: string expected";
                if (message.lease != null && Object.hasOwnProperty.call(message, "lease")) {
                    var error = $root.gensee.v2.Lease.verify(message.lease, long + 1);
                    if (error)
                        return "lease." + error;
                }
                if (message.delegate_to != null && Object.hasOwnProperty.call(message, "delegate_to"))
                    if (!$util.isString(message.delegate_to))
                        return "delegate_to: string expected";
                if (message.mac != null && Object.hasOwnProperty.call(message, "mac"))
                    if (!(message.mac && typeof message.mac.length === "number" || $util.isString(message.mac)))
                        return "mac: buffer expected";
                return null;
            };

            /**
             * Creates a Resolution message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.Resolution
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.Resolution} Resolution
             */
            Resolution.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.Resolution)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.Resolution: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.Resolution();
                if (object.fault_id != null)
                    message.fault_id = String(object.fault_id);
                switch (object.action) {
                default:
                    if (typeof object.action === "number") {
                        message.action = object.action;
                        break;
                    }
                    break;
                case "ACTION_UNSPECIFIED":
                case 0:
                    message.action = 0;
                    break;
                case "ACTION_CONTINUE_ALREADY_AUTHORIZED":
                case 1:
                    message.action = 1;
                    break;
                case "ACTION_RETRY_AFTER_LEASE":
                case 2:
                    message.action = 2;
                    break;
                case "ACTION_DELEGATE":
                case 3:
                    message.action = 3;
                    break;
                case "ACTION_DENY":
                case 4:
                    message.action = 4;
                    break;
                }
                if (object.reason != null)
                    message.reason = String(object.reason);
                if (object.lease != null) {
                    if (!$util.isObject(object.lease))
                        throw TypeError(".gensee.v2.Resolution.lease: object expected");
                    message.lease = $root.gensee.v2.Lease.fromObject(object.lease, long + 1);
                }
                if (object.delegate_to != null)
                    message.delegate_to = String(object.delegate_to);
                if (object.mac != null)
                    if (typeof object.mac === "string")
                        $util.base64.decode(object.mac, message.mac = $util.newBuffer($util.base64.length(object.mac)), 0);
                    else if (object.mac.length >= 0)
                        message.mac = object.mac;
                return message;
            };

            /**
             * Creates a plain object from a Resolution message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.Resolution
             * @static
             * @param {gensee.v2.Resolution} message Resolution
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            Resolution.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.fault_id = "";
                    object.action = options.enums === String ? "ACTION_UNSPECIFIED" : 0;
                    object.reason = "";
                    object.lease = null;
                    object.delegate_to = "";
                    if (options.bytes === String)
                        object.mac = "";
                    else {
                        object.mac = [];
                        if (options.bytes !== Array)
                            object.mac = $util.newBuffer(object.mac);
                    }
                }
                if (message.fault_id != null && Object.hasOwnProperty.call(message, "fault_id"))
                    object.fault_id = message.fault_id;
                if (message.action != null && Object.hasOwnProperty.call(message, "action"))
                    object.action = options.enums === String ? $root.gensee.v2.Action[message.action] === undefined ? message.action : $root.gensee.v2.Action[message.action] : message.action;
                if (message.reason != null && Object.hasOwnProperty.call(message, "reason"))
                    object.reason = message.reason;
                if (message.lease != null && Object.hasOwnProperty.call(message, "lease"))
                    object.lease = $root.gensee.v2.Lease.toObject(message.lease, options, q + 1);
                if (message.delegate_to != null && Object.hasOwnProperty.call(message, "delegate_to"))
                    object.delegate_to = message.delegate_to;
                if (message.mac != null && Object.hasOwnProperty.call(message, "mac"))
                    object.mac = options.bytes === String ? $util.base64.encode(message.mac, 0, message.mac.length) : options.bytes === Array ? Array.prototype.slice.call(message.mac) : message.mac;
                return object;
            };

            /**
             * Converts this Resolution to JSON.
             * @function toJSON
             * @memberof gensee.v2.Resolution
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            Resolution.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return Resolution;
        })();

        return v2;
    })();

    return gensee;
})();

module.exports = $root;
