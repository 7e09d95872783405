/*eslint-disable block-scoped-var, id-length, no-control-regex, no-magic-numbers, no-prototype-builtins, no-redeclare, no-shadow, no-var, sort-vars*/
"use strict";

var $protobuf = require("protobufjs/minimal");

// Common aliases
var $Reader = $protobuf.Reader, $Writer = $protobuf.Writer, $util = $protobuf.util;

// Exported root namespace
var $root = $protobuf.roots["gensee_v2_control"] || ($protobuf.roots["gensee_v2_control"] = {});

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

        v2.LeaseTuple = (function() {

            /**
             * Properties of a LeaseTuple.
             * @memberof gensee.v2
             * @interface ILeaseTuple
             * @property {string|null} [protocol] LeaseTuple protocol
             * @property {string|null} [address] LeaseTuple address
             * @property {number|null} [port] LeaseTuple port
             */

            /**
             * Constructs a new LeaseTuple.
             * @memberof gensee.v2
             * @classdesc Represents a LeaseTuple.
             * @implements ILeaseTuple
             * @constructor
             * @param {gensee.v2.ILeaseTuple=} [properties] Properties to set
             */
            function LeaseTuple(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * LeaseTuple protocol.
             * @member {string} protocol
             * @memberof gensee.v2.LeaseTuple
             * @instance
             */
            LeaseTuple.prototype.protocol = "";

            /**
             * LeaseTuple address.
             * @member {string} address
             * @memberof gensee.v2.LeaseTuple
             * @instance
             */
            LeaseTuple.prototype.address = "";

            /**
             * LeaseTuple port.
             * @member {number} port
             * @memberof gensee.v2.LeaseTuple
             * @instance
             */
            LeaseTuple.prototype.port = 0;

            /**
             * Creates a new LeaseTuple instance using the specified properties.
             * @function create
             * @memberof gensee.v2.LeaseTuple
             * @static
             * @param {gensee.v2.ILeaseTuple=} [properties] Properties to set
             * @returns {gensee.v2.LeaseTuple} LeaseTuple instance
             */
            LeaseTuple.create = function create(properties) {
                return new LeaseTuple(properties);
            };

            /**
             * Encodes the specified LeaseTuple message. Does not implicitly {@link gensee.v2.LeaseTuple.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.LeaseTuple
             * @static
             * @param {gensee.v2.ILeaseTuple} message LeaseTuple message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            LeaseTuple.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.protocol);
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.address);
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    writer.uint32(/* id 3, wireType 0 =*/24).uint32(message.port);
                return writer;
            };

            /**
             * Decodes a LeaseTuple message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.LeaseTuple
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.LeaseTuple} LeaseTuple
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            LeaseTuple.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.LeaseTuple();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.protocol = reader.string();
                            break;
                        }
                    case 2: {
                            message.address = reader.string();
                            break;
                        }
                    case 3: {
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
             * Verifies a LeaseTuple message.
             * @function verify
             * @memberof gensee.v2.LeaseTuple
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            LeaseTuple.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    if (!$util.isString(message.protocol))
                        return "protocol: string expected";
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    if (!$util.isString(message.address))
                        return "address: string expected";
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    if (!$util.isInteger(message.port))
                        return "port: integer expected";
                return null;
            };

            /**
             * Creates a LeaseTuple message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.LeaseTuple
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.LeaseTuple} LeaseTuple
             */
            LeaseTuple.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.LeaseTuple)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.LeaseTuple: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.LeaseTuple();
                if (object.protocol != null)
                    message.protocol = String(object.protocol);
                if (object.address != null)
                    message.address = String(object.address);
                if (object.port != null)
                    message.port = object.port >>> 0;
                return message;
            };

            /**
             * Creates a plain object from a LeaseTuple message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.LeaseTuple
             * @static
             * @param {gensee.v2.LeaseTuple} message LeaseTuple
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            LeaseTuple.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.protocol = "";
                    object.address = "";
                    object.port = 0;
                }
                if (message.protocol != null && Object.hasOwnProperty.call(message, "protocol"))
                    object.protocol = message.protocol;
                if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                    object.address = message.address;
                if (message.port != null && Object.hasOwnProperty.call(message, "port"))
                    object.port = message.port;
                return object;
            };

            /**
             * Converts this LeaseTuple to JSON.
             * @function toJSON
             * @memberof gensee.v2.LeaseTuple
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            LeaseTuple.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return LeaseTuple;
        })();

        v2.PolicyApply = (function() {

            /**
             * Properties of a PolicyApply.
             * @memberof gensee.v2
             * @interface IPolicyApply
             * @property {string|null} [policy_text] PolicyApply policy_text
             * @property {string|null} [policy_hash] PolicyApply policy_hash
             */

            /**
             * Constructs a new PolicyApply.
             * @memberof gensee.v2
             * @classdesc Represents a PolicyApply.
             * @implements IPolicyApply
             * @constructor
             * @param {gensee.v2.IPolicyApply=} [properties] Properties to set
             */
            function PolicyApply(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * PolicyApply policy_text.
             * @member {string} policy_text
             * @memberof gensee.v2.PolicyApply
             * @instance
             */
            PolicyApply.prototype.policy_text = "";

            /**
             * PolicyApply policy_hash.
             * @member {string} policy_hash
             * @memberof gensee.v2.PolicyApply
             * @instance
             */
            PolicyApply.prototype.policy_hash = "";

            /**
             * Creates a new PolicyApply instance using the specified properties.
             * @function create
             * @memberof gensee.v2.PolicyApply
             * @static
             * @param {gensee.v2.IPolicyApply=} [properties] Properties to set
             * @returns {gensee.v2.PolicyApply} PolicyApply instance
             */
            PolicyApply.create = function create(properties) {
                return new PolicyApply(properties);
            };

            /**
             * Encodes the specified PolicyApply message. Does not implicitly {@link gensee.v2.PolicyApply.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.PolicyApply
             * @static
             * @param {gensee.v2.IPolicyApply} message PolicyApply message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            PolicyApply.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.policy_text != null && Object.hasOwnProperty.call(message, "policy_text"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.policy_text);
                if (message.policy_hash != null && Object.hasOwnProperty.call(message, "policy_hash"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.policy_hash);
                return writer;
            };

            /**
             * Decodes a PolicyApply message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.PolicyApply
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.PolicyApply} PolicyApply
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            PolicyApply.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.PolicyApply();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.policy_text = reader.string();
                            break;
                        }
                    case 2: {
                            message.policy_hash = reader.string();
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
             * Verifies a PolicyApply message.
             * @function verify
             * @memberof gensee.v2.PolicyApply
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            PolicyApply.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.policy_text != null && Object.hasOwnProperty.call(message, "policy_text"))
                    if (!$util.isString(message.policy_text))
                        return "policy_text: string expected";
                if (message.policy_hash != null && Object.hasOwnProperty.call(message, "policy_hash"))
                    if (!$util.isString(message.policy_hash))
                        return "policy_hash: string expected";
                return null;
            };

            /**
             * Creates a PolicyApply message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.PolicyApply
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.PolicyApply} PolicyApply
             */
            PolicyApply.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.PolicyApply)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.PolicyApply: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.PolicyApply();
                if (object.policy_text != null)
                    message.policy_text = String(object.policy_text);
                if (object.policy_hash != null)
                    message.policy_hash = String(object.policy_hash);
                return message;
            };

            /**
             * Creates a plain object from a PolicyApply message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.PolicyApply
             * @static
             * @param {gensee.v2.PolicyApply} message PolicyApply
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            PolicyApply.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.policy_text = "";
                    object.policy_hash = "";
                }
                if (message.policy_text != null && Object.hasOwnProperty.call(message, "policy_text"))
                    object.policy_text = message.policy_text;
                if (message.policy_hash != null && Object.hasOwnProperty.call(message, "policy_hash"))
                    object.policy_hash = message.policy_hash;
                return object;
            };

            /**
             * Converts this PolicyApply to JSON.
             * @function toJSON
             * @memberof gensee.v2.PolicyApply
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            PolicyApply.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return PolicyApply;
        })();

        v2.LeaseAdd = (function() {

            /**
             * Properties of a LeaseAdd.
             * @memberof gensee.v2
             * @interface ILeaseAdd
             * @property {gensee.v2.ILeaseTuple|null} [tuple] LeaseAdd tuple
             * @property {number|Long|null} [ttl_ms] LeaseAdd ttl_ms
             * @property {number|null} [max_uses] LeaseAdd max_uses
             */

            /**
             * Constructs a new LeaseAdd.
             * @memberof gensee.v2
             * @classdesc Represents a LeaseAdd.
             * @implements ILeaseAdd
             * @constructor
             * @param {gensee.v2.ILeaseAdd=} [properties] Properties to set
             */
            function LeaseAdd(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * LeaseAdd tuple.
             * @member {gensee.v2.ILeaseTuple|null|undefined} tuple
             * @memberof gensee.v2.LeaseAdd
             * @instance
             */
            LeaseAdd.prototype.tuple = null;

            /**
             * LeaseAdd ttl_ms.
             * @member {number|Long} ttl_ms
             * @memberof gensee.v2.LeaseAdd
             * @instance
             */
            LeaseAdd.prototype.ttl_ms = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * LeaseAdd max_uses.
             * @member {number} max_uses
             * @memberof gensee.v2.LeaseAdd
             * @instance
             */
            LeaseAdd.prototype.max_uses = 0;

            /**
             * Creates a new LeaseAdd instance using the specified properties.
             * @function create
             * @memberof gensee.v2.LeaseAdd
             * @static
             * @param {gensee.v2.ILeaseAdd=} [properties] Properties to set
             * @returns {gensee.v2.LeaseAdd} LeaseAdd instance
             */
            LeaseAdd.create = function create(properties) {
                return new LeaseAdd(properties);
            };

            /**
             * Encodes the specified LeaseAdd message. Does not implicitly {@link gensee.v2.LeaseAdd.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.LeaseAdd
             * @static
             * @param {gensee.v2.ILeaseAdd} message LeaseAdd message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            LeaseAdd.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.tuple != null && Object.hasOwnProperty.call(message, "tuple"))
                    $root.gensee.v2.LeaseTuple.encode(message.tuple, writer.uint32(/* id 1, wireType 2 =*/10).fork(), q + 1).ldelim();
                if (message.ttl_ms != null && Object.hasOwnProperty.call(message, "ttl_ms"))
                    writer.uint32(/* id 2, wireType 0 =*/16).uint64(message.ttl_ms);
                if (message.max_uses != null && Object.hasOwnProperty.call(message, "max_uses"))
                    writer.uint32(/* id 3, wireType 0 =*/24).uint32(message.max_uses);
                return writer;
            };

            /**
             * Decodes a LeaseAdd message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.LeaseAdd
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.LeaseAdd} LeaseAdd
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            LeaseAdd.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.LeaseAdd();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.tuple = $root.gensee.v2.LeaseTuple.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 2: {
                            message.ttl_ms = reader.uint64();
                            break;
                        }
                    case 3: {
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
             * Verifies a LeaseAdd message.
             * @function verify
             * @memberof gensee.v2.LeaseAdd
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            LeaseAdd.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.tuple != null && Object.hasOwnProperty.call(message, "tuple")) {
                    var error = $root.gensee.v2.LeaseTuple.verify(message.tuple, long + 1);
                    if (error)
                        return "tuple." + error;
                }
                if (message.ttl_ms != null && Object.hasOwnProperty.call(message, "ttl_ms"))
                    if (!$util.isInteger(message.ttl_ms) && !(message.ttl_ms && $util.isInteger(message.ttl_ms.low) && $util.isInteger(message.ttl_ms.high)))
                        return "ttl_ms: integer|Long expected";
                if (message.max_uses != null && Object.hasOwnProperty.call(message, "max_uses"))
                    if (!$util.isInteger(message.max_uses))
                        return "max_uses: integer expected";
                return null;
            };

            /**
             * Creates a LeaseAdd message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.LeaseAdd
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.LeaseAdd} LeaseAdd
             */
            LeaseAdd.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.LeaseAdd)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.LeaseAdd: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.LeaseAdd();
                if (object.tuple != null) {
                    if (!$util.isObject(object.tuple))
                        throw TypeError(".gensee.v2.LeaseAdd.tuple: object expected");
                    message.tuple = $root.gensee.v2.LeaseTuple.fromObject(object.tuple, long + 1);
                }
                if (object.ttl_ms != null)
                    if ($util.Long)
                        message.ttl_ms = $util.Long.fromValue(object.ttl_ms, true);
                    else if (typeof object.ttl_ms === "string")
                        message.ttl_ms = parseInt(object.ttl_ms, 10);
                    else if (typeof object.ttl_ms === "number")
                        message.ttl_ms = object.ttl_ms;
                    else if (typeof object.ttl_ms === "object")
                        message.ttl_ms = new $util.LongBits(object.ttl_ms.low >>> 0, object.ttl_ms.high >>> 0).toNumber(true);
                if (object.max_uses != null)
                    message.max_uses = object.max_uses >>> 0;
                return message;
            };

            /**
             * Creates a plain object from a LeaseAdd message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.LeaseAdd
             * @static
             * @param {gensee.v2.LeaseAdd} message LeaseAdd
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            LeaseAdd.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.tuple = null;
                    if ($util.Long) {
                        var long = new $util.Long(0, 0, true);
                        object.ttl_ms = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                    } else
                        object.ttl_ms = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                    object.max_uses = 0;
                }
                if (message.tuple != null && Object.hasOwnProperty.call(message, "tuple"))
                    object.tuple = $root.gensee.v2.LeaseTuple.toObject(message.tuple, options, q + 1);
                if (message.ttl_ms != null && Object.hasOwnProperty.call(message, "ttl_ms"))
                    if (typeof BigInt !== "undefined" && options.longs === BigInt)
                        object.ttl_ms = typeof message.ttl_ms === "number" ? BigInt(message.ttl_ms) : $util.Long.fromBits(message.ttl_ms.low >>> 0, message.ttl_ms.high >>> 0, true).toBigInt();
                    else if (typeof message.ttl_ms === "number")
                        object.ttl_ms = options.longs === String ? String(message.ttl_ms) : message.ttl_ms;
                    else
                        object.ttl_ms = options.longs === String ? $util.Long.prototype.toString.call(message.ttl_ms) : options.longs === Number ? new $util.LongBits(message.ttl_ms.low >>> 0, message.ttl_ms.high >>> 0).toNumber(true) : message.ttl_ms;
                if (message.max_uses != null && Object.hasOwnProperty.call(message, "max_uses"))
                    object.max_uses = message.max_uses;
                return object;
            };

            /**
             * Converts this LeaseAdd to JSON.
             * @function toJSON
             * @memberof gensee.v2.LeaseAdd
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            LeaseAdd.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return LeaseAdd;
        })();

        v2.LeaseRm = (function() {

            /**
             * Properties of a LeaseRm.
             * @memberof gensee.v2
             * @interface ILeaseRm
             * @property {gensee.v2.ILeaseTuple|null} [tuple] LeaseRm tuple
             */

            /**
             * Constructs a new LeaseRm.
             * @memberof gensee.v2
             * @classdesc Represents a LeaseRm.
             * @implements ILeaseRm
             * @constructor
             * @param {gensee.v2.ILeaseRm=} [properties] Properties to set
             */
            function LeaseRm(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * LeaseRm tuple.
             * @member {gensee.v2.ILeaseTuple|null|undefined} tuple
             * @memberof gensee.v2.LeaseRm
             * @instance
             */
            LeaseRm.prototype.tuple = null;

            /**
             * Creates a new LeaseRm instance using the specified properties.
             * @function create
             * @memberof gensee.v2.LeaseRm
             * @static
             * @param {gensee.v2.ILeaseRm=} [properties] Properties to set
             * @returns {gensee.v2.LeaseRm} LeaseRm instance
             */
            LeaseRm.create = function create(properties) {
                return new LeaseRm(properties);
            };

            /**
             * Encodes the specified LeaseRm message. Does not implicitly {@link gensee.v2.LeaseRm.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.LeaseRm
             * @static
             * @param {gensee.v2.ILeaseRm} message LeaseRm message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            LeaseRm.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.tuple != null && Object.hasOwnProperty.call(message, "tuple"))
                    $root.gensee.v2.LeaseTuple.encode(message.tuple, writer.uint32(/* id 1, wireType 2 =*/10).fork(), q + 1).ldelim();
                return writer;
            };

            /**
             * Decodes a LeaseRm message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.LeaseRm
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.LeaseRm} LeaseRm
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            LeaseRm.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.LeaseRm();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.tuple = $root.gensee.v2.LeaseTuple.decode(reader, reader.uint32(), undefined, long + 1);
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
             * Verifies a LeaseRm message.
             * @function verify
             * @memberof gensee.v2.LeaseRm
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            LeaseRm.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.tuple != null && Object.hasOwnProperty.call(message, "tuple")) {
                    var error = $root.gensee.v2.LeaseTuple.verify(message.tuple, long + 1);
                    if (error)
                        return "tuple." + error;
                }
                return null;
            };

            /**
             * Creates a LeaseRm message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.LeaseRm
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.LeaseRm} LeaseRm
             */
            LeaseRm.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.LeaseRm)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.LeaseRm: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.LeaseRm();
                if (object.tuple != null) {
                    if (!$util.isObject(object.tuple))
                        throw TypeError(".gensee.v2.LeaseRm.tuple: object expected");
                    message.tuple = $root.gensee.v2.LeaseTuple.fromObject(object.tuple, long + 1);
                }
                return message;
            };

            /**
             * Creates a plain object from a LeaseRm message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.LeaseRm
             * @static
             * @param {gensee.v2.LeaseRm} message LeaseRm
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            LeaseRm.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults)
                    object.tuple = null;
                if (message.tuple != null && Object.hasOwnProperty.call(message, "tuple"))
                    object.tuple = $root.gensee.v2.LeaseTuple.toObject(message.tuple, options, q + 1);
                return object;
            };

            /**
             * Converts this LeaseRm to JSON.
             * @function toJSON
             * @memberof gensee.v2.LeaseRm
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            LeaseRm.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return LeaseRm;
        })();

        v2.AttentionRaise = (function() {

            /**
             * Properties of an AttentionRaise.
             * @memberof gensee.v2
             * @interface IAttentionRaise
             * @property {string|null} [signature] AttentionRaise signature
             * @property {string|null} [detail] AttentionRaise detail
             * @property {Array.<number|Long>|null} [evidence] AttentionRaise evidence
             * @property {Array.<string>|null} [refs] AttentionRaise refs
             * @property {string|null} [agent_events] AttentionRaise agent_events
             */

            /**
             * Constructs a new AttentionRaise.
             * @memberof gensee.v2
             * @classdesc Represents an AttentionRaise.
             * @implements IAttentionRaise
             * @constructor
             * @param {gensee.v2.IAttentionRaise=} [properties] Properties to set
             */
            function AttentionRaise(properties) {
                this.evidence = [];
                this.refs = [];
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * AttentionRaise signature.
             * @member {string} signature
             * @memberof gensee.v2.AttentionRaise
             * @instance
             */
            AttentionRaise.prototype.signature = "";

            /**
             * AttentionRaise detail.
             * @member {string} detail
             * @memberof gensee.v2.AttentionRaise
             * @instance
             */
            AttentionRaise.prototype.detail = "";

            /**
             * AttentionRaise evidence.
             * @member {Array.<number|Long>} evidence
             * @memberof gensee.v2.AttentionRaise
             * @instance
             */
            AttentionRaise.prototype.evidence = $util.emptyArray;

            /**
             * AttentionRaise refs.
             * @member {Array.<string>} refs
             * @memberof gensee.v2.AttentionRaise
             * @instance
             */
            AttentionRaise.prototype.refs = $util.emptyArray;

            /**
             * AttentionRaise agent_events.
             * @member {string} agent_events
             * @memberof gensee.v2.AttentionRaise
             * @instance
             */
            AttentionRaise.prototype.agent_events = "";

            /**
             * Creates a new AttentionRaise instance using the specified properties.
             * @function create
             * @memberof gensee.v2.AttentionRaise
             * @static
             * @param {gensee.v2.IAttentionRaise=} [properties] Properties to set
             * @returns {gensee.v2.AttentionRaise} AttentionRaise instance
             */
            AttentionRaise.create = function create(properties) {
                return new AttentionRaise(properties);
            };

            /**
             * Encodes the specified AttentionRaise message. Does not implicitly {@link gensee.v2.AttentionRaise.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.AttentionRaise
             * @static
             * @param {gensee.v2.IAttentionRaise} message AttentionRaise message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            AttentionRaise.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.signature != null && Object.hasOwnProperty.call(message, "signature"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.signature);
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.detail);
                if (message.evidence != null && message.evidence.length) {
                    writer.uint32(/* id 3, wireType 2 =*/26).fork();
                    for (var i = 0; i < message.evidence.length; ++i)
                        writer.uint64(message.evidence[i]);
                    writer.ldelim();
                }
                if (message.refs != null && message.refs.length)
                    for (var i = 0; i < message.refs.length; ++i)
                        writer.uint32(/* id 4, wireType 2 =*/34).string(message.refs[i]);
                if (message.agent_events != null && Object.hasOwnProperty.call(message, "agent_events"))
                    writer.uint32(/* id 5, wireType 2 =*/42).string(message.agent_events);
                return writer;
            };

            /**
             * Decodes an AttentionRaise message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.AttentionRaise
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.AttentionRaise} AttentionRaise
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            AttentionRaise.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.AttentionRaise();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.signature = reader.string();
                            break;
                        }
                    case 2: {
                            message.detail = reader.string();
                            break;
                        }
                    case 3: {
                            if (!(message.evidence && message.evidence.length))
                                message.evidence = [];
                            if ((tag & 7) === 2) {
                                var end2 = reader.uint32() + reader.pos;
                                if (end2 > reader.len)
                                    throw RangeError("index out of range");
                                reader.len = end2;
                                while (reader.pos < end2)
                                    message.evidence.push(reader.uint64());
                                if (reader.pos !== end2)
                                    throw RangeError("index out of range");
                                reader.len = end;
                            } else
                                message.evidence.push(reader.uint64());
                            break;
                        }
                    case 4: {
                            if (!(message.refs && message.refs.length))
                                message.refs = [];
                            message.refs.push(reader.string());
                            break;
                        }
                    case 5: {
                            message.agent_events = reader.string();
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
             * Verifies an AttentionRaise message.
             * @function verify
             * @memberof gensee.v2.AttentionRaise
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            AttentionRaise.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.signature != null && Object.hasOwnProperty.call(message, "signature"))
                    if (!$util.isString(message.signature))
                        return "signature: string expected";
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    if (!$util.isString(message.detail))
                        return "detail: string expected";
                if (message.evidence != null && Object.hasOwnProperty.call(message, "evidence")) {
                    if (!Array.isArray(message.evidence))
                        return "evidence: array expected";
                    for (var i = 0; i < message.evidence.length; ++i)
                        if (!$util.isInteger(message.evidence[i]) && !(message.evidence[i] && $util.isInteger(message.evidence[i].low) && $util.isInteger(message.evidence[i].high)))
                            return "evidence: integer|Long[] expected";
                }
                if (message.refs != null && Object.hasOwnProperty.call(message, "refs")) {
                    if (!Array.isArray(message.refs))
                        return "refs: array expected";
                    for (var i = 0; i < message.refs.length; ++i)
                        if (!$util.isString(message.refs[i]))
                            return "refs: string[] expected";
                }
                if (message.agent_events != null && Object.hasOwnProperty.call(message, "agent_events"))
                    if (!$util.isString(message.agent_events))
                        return "agent_events: string expected";
                return null;
            };

            /**
             * Creates an AttentionRaise message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.AttentionRaise
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.AttentionRaise} AttentionRaise
             */
            AttentionRaise.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.AttentionRaise)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.AttentionRaise: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.AttentionRaise();
                if (object.signature != null)
                    message.signature = String(object.signature);
                if (object.detail != null)
                    message.detail = String(object.detail);
                if (object.evidence) {
                    if (!Array.isArray(object.evidence))
                        throw TypeError(".gensee.v2.AttentionRaise.evidence: array expected");
                    message.evidence = [];
                    for (var i = 0; i < object.evidence.length; ++i)
                        if ($util.Long)
                            message.evidence[i] = $util.Long.fromValue(object.evidence[i], true);
                        else if (typeof object.evidence[i] === "string")
                            message.evidence[i] = parseInt(object.evidence[i], 10);
                        else if (typeof object.evidence[i] === "number")
                            message.evidence[i] = object.evidence[i];
                        else if (typeof object.evidence[i] === "object")
                            message.evidence[i] = new $util.LongBits(object.evidence[i].low >>> 0, object.evidence[i].high >>> 0).toNumber(true);
                }
                if (object.refs) {
                    if (!Array.isArray(object.refs))
                        throw TypeError(".gensee.v2.AttentionRaise.refs: array expected");
                    message.refs = [];
                    for (var i = 0; i < object.refs.length; ++i)
                        message.refs[i] = String(object.refs[i]);
                }
                if (object.agent_events != null)
                    message.agent_events = String(object.agent_events);
                return message;
            };

            /**
             * Creates a plain object from an AttentionRaise message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.AttentionRaise
             * @static
             * @param {gensee.v2.AttentionRaise} message AttentionRaise
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            AttentionRaise.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.arrays || options.defaults) {
                    object.evidence = [];
                    object.refs = [];
                }
                if (options.defaults) {
                    object.signature = "";
                    object.detail = "";
                    object.agent_events = "";
                }
                if (message.signature != null && Object.hasOwnProperty.call(message, "signature"))
                    object.signature = message.signature;
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    object.detail = message.detail;
                if (message.evidence && message.evidence.length) {
                    object.evidence = [];
                    for (var j = 0; j < message.evidence.length; ++j)
                        if (typeof BigInt !== "undefined" && options.longs === BigInt)
                            object.evidence[j] = typeof message.evidence[j] === "number" ? BigInt(message.evidence[j]) : $util.Long.fromBits(message.evidence[j].low >>> 0, message.evidence[j].high >>> 0, true).toBigInt();
                        else if (typeof message.evidence[j] === "number")
                            object.evidence[j] = options.longs === String ? String(message.evidence[j]) : message.evidence[j];
                        else
                            object.evidence[j] = options.longs === String ? $util.Long.prototype.toString.call(message.evidence[j]) : options.longs === Number ? new $util.LongBits(message.evidence[j].low >>> 0, message.evidence[j].high >>> 0).toNumber(true) : message.evidence[j];
                }
                if (message.refs && message.refs.length) {
                    object.refs = [];
                    for (var j = 0; j < message.refs.length; ++j)
                        object.refs[j] = message.refs[j];
                }
                if (message.agent_events != null && Object.hasOwnProperty.call(message, "agent_events"))
                    object.agent_events = message.agent_events;
                return object;
            };

            /**
             * Converts this AttentionRaise to JSON.
             * @function toJSON
             * @memberof gensee.v2.AttentionRaise
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            AttentionRaise.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return AttentionRaise;
        })();

        v2.AttentionClear = (function() {

            /**
             * Properties of an AttentionClear.
             * @memberof gensee.v2
             * @interface IAttentionClear
             * @property {string|null} [by] AttentionClear by
             * @property {string|null} [person] AttentionClear person
             * @property {string|null} [note] AttentionClear note
             */

            /**
             * Constructs a new AttentionClear.
             * @memberof gensee.v2
             * @classdesc Represents an AttentionClear.
             * @implements IAttentionClear
             * @constructor
             * @param {gensee.v2.IAttentionClear=} [properties] Properties to set
             */
            function AttentionClear(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * AttentionClear by.
             * @member {string} by
             * @memberof gensee.v2.AttentionClear
             * @instance
             */
            AttentionClear.prototype.by = "";

            /**
             * AttentionClear person.
             * @member {string} person
             * @memberof gensee.v2.AttentionClear
             * @instance
             */
            AttentionClear.prototype.person = "";

            /**
             * AttentionClear note.
             * @member {string} note
             * @memberof gensee.v2.AttentionClear
             * @instance
             */
            AttentionClear.prototype.note = "";

            /**
             * Creates a new AttentionClear instance using the specified properties.
             * @function create
             * @memberof gensee.v2.AttentionClear
             * @static
             * @param {gensee.v2.IAttentionClear=} [properties] Properties to set
             * @returns {gensee.v2.AttentionClear} AttentionClear instance
             */
            AttentionClear.create = function create(properties) {
                return new AttentionClear(properties);
            };

            /**
             * Encodes the specified AttentionClear message. Does not implicitly {@link gensee.v2.AttentionClear.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.AttentionClear
             * @static
             * @param {gensee.v2.IAttentionClear} message AttentionClear message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            AttentionClear.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.by != null && Object.hasOwnProperty.call(message, "by"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.by);
                if (message.person != null && Object.hasOwnProperty.call(message, "person"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.person);
                if (message.note != null && Object.hasOwnProperty.call(message, "note"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.note);
                return writer;
            };

            /**
             * Decodes an AttentionClear message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.AttentionClear
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.AttentionClear} AttentionClear
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            AttentionClear.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.AttentionClear();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.by = reader.string();
                            break;
                        }
                    case 2: {
                            message.person = reader.string();
                            break;
                        }
                    case 3: {
                            message.note = reader.string();
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
             * Verifies an AttentionClear message.
             * @function verify
             * @memberof gensee.v2.AttentionClear
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            AttentionClear.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.by != null && Object.hasOwnProperty.call(message, "by"))
                    if (!$util.isString(message.by))
                        return "by: string expected";
                if (message.person != null && Object.hasOwnProperty.call(message, "person"))
                    if (!$util.isString(message.person))
                        return "person: string expected";
                if (message.note != null && Object.hasOwnProperty.call(message, "note"))
                    if (!$util.isString(message.note))
                        return "note: string expected";
                return null;
            };

            /**
             * Creates an AttentionClear message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.AttentionClear
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.AttentionClear} AttentionClear
             */
            AttentionClear.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.AttentionClear)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.AttentionClear: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.AttentionClear();
                if (object.by != null)
                    message.by = String(object.by);
                if (object.person != null)
                    message.person = String(object.person);
                if (object.note != null)
                    message.note = String(object.note);
                return message;
            };

            /**
             * Creates a plain object from an AttentionClear message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.AttentionClear
             * @static
             * @param {gensee.v2.AttentionClear} message AttentionClear
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            AttentionClear.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.by = "";
                    object.person = "";
                    object.note = "";
                }
                if (message.by != null && Object.hasOwnProperty.call(message, "by"))
                    object.by = message.by;
                if (message.person != null && Object.hasOwnProperty.call(message, "person"))
                    object.person = message.person;
                if (message.note != null && Object.hasOwnProperty.call(message, "note"))
                    object.note = message.note;
                return object;
            };

            /**
             * Converts this AttentionClear to JSON.
             * @function toJSON
             * @memberof gensee.v2.AttentionClear
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            AttentionClear.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return AttentionClear;
        })();

        v2.ExecutorTool = (function() {

            /**
             * Properties of an ExecutorTool.
             * @memberof gensee.v2
             * @interface IExecutorTool
             * @property {number|Long|null} [cgroup_id] ExecutorTool cgroup_id
             * @property {string|null} [tool_id] ExecutorTool tool_id
             * @property {string|null} [call_id] ExecutorTool call_id
             */

            /**
             * Constructs a new ExecutorTool.
             * @memberof gensee.v2
             * @classdesc Represents an ExecutorTool.
             * @implements IExecutorTool
             * @constructor
             * @param {gensee.v2.IExecutorTool=} [properties] Properties to set
             */
            function ExecutorTool(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ExecutorTool cgroup_id.
             * @member {number|Long} cgroup_id
             * @memberof gensee.v2.ExecutorTool
             * @instance
             */
            ExecutorTool.prototype.cgroup_id = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * ExecutorTool tool_id.
             * @member {string} tool_id
             * @memberof gensee.v2.ExecutorTool
             * @instance
             */
            ExecutorTool.prototype.tool_id = "";

            /**
             * ExecutorTool call_id.
             * @member {string} call_id
             * @memberof gensee.v2.ExecutorTool
             * @instance
             */
            ExecutorTool.prototype.call_id = "";

            /**
             * Creates a new ExecutorTool instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ExecutorTool
             * @static
             * @param {gensee.v2.IExecutorTool=} [properties] Properties to set
             * @returns {gensee.v2.ExecutorTool} ExecutorTool instance
             */
            ExecutorTool.create = function create(properties) {
                return new ExecutorTool(properties);
            };

            /**
             * Encodes the specified ExecutorTool message. Does not implicitly {@link gensee.v2.ExecutorTool.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ExecutorTool
             * @static
             * @param {gensee.v2.IExecutorTool} message ExecutorTool message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ExecutorTool.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.cgroup_id != null && Object.hasOwnProperty.call(message, "cgroup_id"))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint64(message.cgroup_id);
                if (message.tool_id != null && Object.hasOwnProperty.call(message, "tool_id"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.tool_id);
                if (message.call_id != null && Object.hasOwnProperty.call(message, "call_id"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.call_id);
                return writer;
            };

            /**
             * Decodes an ExecutorTool message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ExecutorTool
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ExecutorTool} ExecutorTool
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ExecutorTool.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.ExecutorTool();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.cgroup_id = reader.uint64();
                            break;
                        }
                    case 2: {
                            message.tool_id = reader.string();
                            break;
                        }
                    case 3: {
                            message.call_id = reader.string();
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
             * Verifies an ExecutorTool message.
             * @function verify
             * @memberof gensee.v2.ExecutorTool
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ExecutorTool.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.cgroup_id != null && Object.hasOwnProperty.call(message, "cgroup_id"))
                    if (!$util.isInteger(message.cgroup_id) && !(message.cgroup_id && $util.isInteger(message.cgroup_id.low) && $util.isInteger(message.cgroup_id.high)))
                        return "cgroup_id: integer|Long expected";
                if (message.tool_id != null && Object.hasOwnProperty.call(message, "tool_id"))
                    if (!$util.isString(message.tool_id))
                        return "tool_id: string expected";
                if (message.call_id != null && Object.hasOwnProperty.call(message, "call_id"))
                    if (!$util.isString(message.call_id))
                        return "call_id: string expected";
                return null;
            };

            /**
             * Creates an ExecutorTool message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ExecutorTool
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ExecutorTool} ExecutorTool
             */
            ExecutorTool.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ExecutorTool)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ExecutorTool: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ExecutorTool();
                if (object.cgroup_id != null)
                    if ($util.Long)
                        message.cgroup_id = $util.Long.fromValue(object.cgroup_id, true);
                    else if (typeof object.cgroup_id === "string")
                        message.cgroup_id = parseInt(object.cgroup_id, 10);
                    else if (typeof object.cgroup_id === "number")
                        message.cgroup_id = object.cgroup_id;
                    else if (typeof object.cgroup_id === "object")
                        message.cgroup_id = new $util.LongBits(object.cgroup_id.low >>> 0, object.cgroup_id.high >>> 0).toNumber(true);
                if (object.tool_id != null)
                    message.tool_id = String(object.tool_id);
                if (object.call_id != null)
                    message.call_id = String(object.call_id);
                return message;
            };

            /**
             * Creates a plain object from an ExecutorTool message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ExecutorTool
             * @static
             * @param {gensee.v2.ExecutorTool} message ExecutorTool
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ExecutorTool.toObject = function toObject(message, options, q) {
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
                        object.cgroup_id = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                    } else
                        object.cgroup_id = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                    object.tool_id = "";
                    object.call_id = "";
                }
                if (message.cgroup_id != null && Object.hasOwnProperty.call(message, "cgroup_id"))
                    if (typeof BigInt !== "undefined" && options.longs === BigInt)
                        object.cgroup_id = typeof message.cgroup_id === "number" ? BigInt(message.cgroup_id) : $util.Long.fromBits(message.cgroup_id.low >>> 0, message.cgroup_id.high >>> 0, true).toBigInt();
                    else if (typeof message.cgroup_id === "number")
                        object.cgroup_id = options.longs === String ? String(message.cgroup_id) : message.cgroup_id;
                    else
                        object.cgroup_id = options.longs === String ? $util.Long.prototype.toString.call(message.cgroup_id) : options.longs === Number ? new $util.LongBits(message.cgroup_id.low >>> 0, message.cgroup_id.high >>> 0).toNumber(true) : message.cgroup_id;
                if (message.tool_id != null && Object.hasOwnProperty.call(message, "tool_id"))
                    object.tool_id = message.tool_id;
                if (message.call_id != null && Object.hasOwnProperty.call(message, "call_id"))
                    object.call_id = message.call_id;
                return object;
            };

            /**
             * Converts this ExecutorTool to JSON.
             * @function toJSON
             * @memberof gensee.v2.ExecutorTool
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ExecutorTool.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ExecutorTool;
        })();

        v2.ExecutorDenial = (function() {

            /**
             * Properties of an ExecutorDenial.
             * @memberof gensee.v2
             * @interface IExecutorDenial
             * @property {string|null} [tool_id] ExecutorDenial tool_id
             * @property {string|null} [call_id] ExecutorDenial call_id
             * @property {string|null} [reason] ExecutorDenial reason
             * @property {string|null} [target] ExecutorDenial target
             * @property {string|null} [detail] ExecutorDenial detail
             * @property {number|null} [pid] ExecutorDenial pid
             */

            /**
             * Constructs a new ExecutorDenial.
             * @memberof gensee.v2
             * @classdesc Represents an ExecutorDenial.
             * @implements IExecutorDenial
             * @constructor
             * @param {gensee.v2.IExecutorDenial=} [properties] Properties to set
             */
            function ExecutorDenial(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ExecutorDenial tool_id.
             * @member {string} tool_id
             * @memberof gensee.v2.ExecutorDenial
             * @instance
             */
            ExecutorDenial.prototype.tool_id = "";

            /**
             * ExecutorDenial call_id.
             * @member {string} call_id
             * @memberof gensee.v2.ExecutorDenial
             * @instance
             */
            ExecutorDenial.prototype.call_id = "";

            /**
             * ExecutorDenial reason.
             * @member {string} reason
             * @memberof gensee.v2.ExecutorDenial
             * @instance
             */
            ExecutorDenial.prototype.reason = "";

            /**
             * ExecutorDenial target.
             * @member {string} target
             * @memberof gensee.v2.ExecutorDenial
             * @instance
             */
            ExecutorDenial.prototype.target = "";

            /**
             * ExecutorDenial detail.
             * @member {string} detail
             * @memberof gensee.v2.ExecutorDenial
             * @instance
             */
            ExecutorDenial.prototype.detail = "";

            /**
             * ExecutorDenial pid.
             * @member {number} pid
             * @memberof gensee.v2.ExecutorDenial
             * @instance
             */
            ExecutorDenial.prototype.pid = 0;

            /**
             * Creates a new ExecutorDenial instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ExecutorDenial
             * @static
             * @param {gensee.v2.IExecutorDenial=} [properties] Properties to set
             * @returns {gensee.v2.ExecutorDenial} ExecutorDenial instance
             */
            ExecutorDenial.create = function create(properties) {
                return new ExecutorDenial(properties);
            };

            /**
             * Encodes the specified ExecutorDenial message. Does not implicitly {@link gensee.v2.ExecutorDenial.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ExecutorDenial
             * @static
             * @param {gensee.v2.IExecutorDenial} message ExecutorDenial message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ExecutorDenial.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.tool_id != null && Object.hasOwnProperty.call(message, "tool_id"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.tool_id);
                if (message.call_id != null && Object.hasOwnProperty.call(message, "call_id"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.call_id);
                if (message.reason != null && Object.hasOwnProperty.call(message, "reason"))
                    writer.uint32(/* id 3, wireType 2 =*/26).string(message.reason);
                if (message.target != null && Object.hasOwnProperty.call(message, "target"))
                    writer.uint32(/* id 4, wireType 2 =*/34).string(message.target);
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    writer.uint32(/* id 5, wireType 2 =*/42).string(message.detail);
                if (message.pid != null && Object.hasOwnProperty.call(message, "pid"))
                    writer.uint32(/* id 6, wireType 0 =*/48).uint32(message.pid);
                return writer;
            };

            /**
             * Decodes an ExecutorDenial message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ExecutorDenial
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ExecutorDenial} ExecutorDenial
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ExecutorDenial.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.ExecutorDenial();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.tool_id = reader.string();
                            break;
                        }
                    case 2: {
                            message.call_id = reader.string();
                            break;
                        }
                    case 3: {
                            message.reason = reader.string();
                            break;
                        }
                    case 4: {
                            message.target = reader.string();
                            break;
                        }
                    case 5: {
                            message.detail = reader.string();
                            break;
                        }
                    case 6: {
                            message.pid = reader.uint32();
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
             * Verifies an ExecutorDenial message.
             * @function verify
             * @memberof gensee.v2.ExecutorDenial
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ExecutorDenial.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.tool_id != null && Object.hasOwnProperty.call(message, "tool_id"))
                    if (!$util.isString(message.tool_id))
                        return "tool_id: string expected";
                if (message.call_id != null && Object.hasOwnProperty.call(message, "call_id"))
                    if (!$util.isString(message.call_id))
                        return "call_id: string expected";
                if (message.reason != null && Object.hasOwnProperty.call(message, "reason"))
                    if (!$util.isString(message.reason))
                        return "reason: string expected";
                if (message.target != null && Object.hasOwnProperty.call(message, "target"))
                    if (!$util.isString(message.target))
                        return "target: string expected";
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    if (!$util.isString(message.detail))
                        return "detail: string expected";
                if (message.pid != null && Object.hasOwnProperty.call(message, "pid"))
                    if (!$util.isInteger(message.pid))
                        return "pid: integer expected";
                return null;
            };

            /**
             * Creates an ExecutorDenial message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ExecutorDenial
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ExecutorDenial} ExecutorDenial
             */
            ExecutorDenial.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ExecutorDenial)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ExecutorDenial: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ExecutorDenial();
                if (object.tool_id != null)
                    message.tool_id = String(object.tool_id);
                if (object.call_id != null)
                    message.call_id = String(object.call_id);
                if (object.reason != null)
                    message.reason = String(object.reason);
                if (object.target != null)
                    message.target = String(object.target);
                if (object.detail != null)
                    message.detail = String(object.detail);
                if (object.pid != null)
                    message.pid = object.pid >>> 0;
                return message;
            };

            /**
             * Creates a plain object from an ExecutorDenial message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ExecutorDenial
             * @static
             * @param {gensee.v2.ExecutorDenial} message ExecutorDenial
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ExecutorDenial.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.tool_id = "";
                    object.call_id = "";
                    object.reason = "";
                    object.target = "";
                    object.detail = "";
                    object.pid = 0;
                }
                if (message.tool_id != null && Object.hasOwnProperty.call(message, "tool_id"))
                    object.tool_id = message.tool_id;
                if (message.call_id != null && Object.hasOwnProperty.call(message, "call_id"))
                    object.call_id = message.call_id;
                if (message.reason != null && Object.hasOwnProperty.call(message, "reason"))
                    object.reason = message.reason;
                if (message.target != null && Object.hasOwnProperty.call(message, "target"))
                    object.target = message.target;
                if (message.detail != null && Object.hasOwnProperty.call(message, "detail"))
                    object.detail = message.detail;
                if (message.pid != null && Object.hasOwnProperty.call(message, "pid"))
                    object.pid = message.pid;
                return object;
            };

            /**
             * Converts this ExecutorDenial to JSON.
             * @function toJSON
             * @memberof gensee.v2.ExecutorDenial
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ExecutorDenial.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ExecutorDenial;
        })();

        v2.ControlRequest = (function() {

            /**
             * Properties of a ControlRequest.
             * @memberof gensee.v2
             * @interface IControlRequest
             * @property {number|null} [schema] ControlRequest schema
             * @property {gensee.v2.IPolicyApply|null} [policy_apply] ControlRequest policy_apply
             * @property {gensee.v2.ILeaseAdd|null} [lease_add] ControlRequest lease_add
             * @property {gensee.v2.ILeaseRm|null} [lease_rm] ControlRequest lease_rm
             * @property {gensee.v2.IAttentionRaise|null} [attention_raise] ControlRequest attention_raise
             * @property {gensee.v2.IAttentionClear|null} [attention_clear] ControlRequest attention_clear
             * @property {gensee.v2.IExecutorTool|null} [executor_tool] ControlRequest executor_tool
             * @property {gensee.v2.IExecutorDenial|null} [executor_denial] ControlRequest executor_denial
             */

            /**
             * Constructs a new ControlRequest.
             * @memberof gensee.v2
             * @classdesc Represents a ControlRequest.
             * @implements IControlRequest
             * @constructor
             * @param {gensee.v2.IControlRequest=} [properties] Properties to set
             */
            function ControlRequest(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ControlRequest schema.
             * @member {number} schema
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.schema = 0;

            /**
             * ControlRequest policy_apply.
             * @member {gensee.v2.IPolicyApply|null|undefined} policy_apply
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.policy_apply = null;

            /**
             * ControlRequest lease_add.
             * @member {gensee.v2.ILeaseAdd|null|undefined} lease_add
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.lease_add = null;

            /**
             * ControlRequest lease_rm.
             * @member {gensee.v2.ILeaseRm|null|undefined} lease_rm
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.lease_rm = null;

            /**
             * ControlRequest attention_raise.
             * @member {gensee.v2.IAttentionRaise|null|undefined} attention_raise
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.attention_raise = null;

            /**
             * ControlRequest attention_clear.
             * @member {gensee.v2.IAttentionClear|null|undefined} attention_clear
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.attention_clear = null;

            /**
             * ControlRequest executor_tool.
             * @member {gensee.v2.IExecutorTool|null|undefined} executor_tool
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.executor_tool = null;

            /**
             * ControlRequest executor_denial.
             * @member {gensee.v2.IExecutorDenial|null|undefined} executor_denial
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            ControlRequest.prototype.executor_denial = null;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            /**
             * ControlRequest command.
             * @member {"policy_apply"|"lease_add"|"lease_rm"|"attention_raise"|"attention_clear"|"executor_tool"|"executor_denial"|undefined} command
             * @memberof gensee.v2.ControlRequest
             * @instance
             */
            Object.defineProperty(ControlRequest.prototype, "command", {
                get: $util.oneOfGetter($oneOfFields = ["policy_apply", "lease_add", "lease_rm", "attention_raise", "attention_clear", "executor_tool", "executor_denial"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Creates a new ControlRequest instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ControlRequest
             * @static
             * @param {gensee.v2.IControlRequest=} [properties] Properties to set
             * @returns {gensee.v2.ControlRequest} ControlRequest instance
             */
            ControlRequest.create = function create(properties) {
                return new ControlRequest(properties);
            };

            /**
             * Encodes the specified ControlRequest message. Does not implicitly {@link gensee.v2.ControlRequest.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ControlRequest
             * @static
             * @param {gensee.v2.IControlRequest} message ControlRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ControlRequest.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.schema);
                if (message.policy_apply != null && Object.hasOwnProperty.call(message, "policy_apply"))
                    $root.gensee.v2.PolicyApply.encode(message.policy_apply, writer.uint32(/* id 2, wireType 2 =*/18).fork(), q + 1).ldelim();
                if (message.lease_add != null && Object.hasOwnProperty.call(message, "lease_add"))
                    $root.gensee.v2.LeaseAdd.encode(message.lease_add, writer.uint32(/* id 3, wireType 2 =*/26).fork(), q + 1).ldelim();
                if (message.lease_rm != null && Object.hasOwnProperty.call(message, "lease_rm"))
                    $root.gensee.v2.LeaseRm.encode(message.lease_rm, writer.uint32(/* id 4, wireType 2 =*/34).fork(), q + 1).ldelim();
                if (message.attention_raise != null && Object.hasOwnProperty.call(message, "attention_raise"))
                    $root.gensee.v2.AttentionRaise.encode(message.attention_raise, writer.uint32(/* id 5, wireType 2 =*/42).fork(), q + 1).ldelim();
                if (message.attention_clear != null && Object.hasOwnProperty.call(message, "attention_clear"))
                    $root.gensee.v2.AttentionClear.encode(message.attention_clear, writer.uint32(/* id 6, wireType 2 =*/50).fork(), q + 1).ldelim();
                if (message.executor_tool != null && Object.hasOwnProperty.call(message, "executor_tool"))
                    $root.gensee.v2.ExecutorTool.encode(message.executor_tool, writer.uint32(/* id 7, wireType 2 =*/58).fork(), q + 1).ldelim();
                if (message.executor_denial != null && Object.hasOwnProperty.call(message, "executor_denial"))
                    $root.gensee.v2.ExecutorDenial.encode(message.executor_denial, writer.uint32(/* id 8, wireType 2 =*/66).fork(), q + 1).ldelim();
                return writer;
            };

            /**
             * Decodes a ControlRequest message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ControlRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ControlRequest} ControlRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ControlRequest.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.ControlRequest();
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
                            message.policy_apply = $root.gensee.v2.PolicyApply.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 3: {
                            message.lease_add = $root.gensee.v2.LeaseAdd.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 4: {
                            message.lease_rm = $root.gensee.v2.LeaseRm.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 5: {
                            message.attention_raise = $root.gensee.v2.AttentionRaise.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 6: {
                            message.attention_clear = $root.gensee.v2.AttentionClear.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 7: {
                            message.executor_tool = $root.gensee.v2.ExecutorTool.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 8: {
                            message.executor_denial = $root.gensee.v2.ExecutorDenial.decode(reader, reader.uint32(), undefined, long + 1);
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
             * Verifies a ControlRequest message.
             * @function verify
             * @memberof gensee.v2.ControlRequest
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ControlRequest.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                var properties = {};
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    if (!$util.isInteger(message.schema))
                        return "schema: integer expected";
                if (message.policy_apply != null && Object.hasOwnProperty.call(message, "policy_apply")) {
                    properties.command = 1;
                    {
                        var error = $root.gensee.v2.PolicyApply.verify(message.policy_apply, long + 1);
                        if (error)
                            return "policy_apply." + error;
                    }
                }
                if (message.lease_add != null && Object.hasOwnProperty.call(message, "lease_add")) {
                    if (properties.command === 1)
                        return "command: multiple values";
                    properties.command = 1;
                    {
                        var error = $root.gensee.v2.LeaseAdd.verify(message.lease_add, long + 1);
                        if (error)
                            return "lease_add." + error;
                    }
                }
                if (message.lease_rm != null && Object.hasOwnProperty.call(message, "lease_rm")) {
                    if (properties.command === 1)
                        return "command: multiple values";
                    properties.command = 1;
                    {
                        var error = $root.gensee.v2.LeaseRm.verify(message.lease_rm, long + 1);
                        if (error)
                            return "lease_rm." + error;
                    }
                }
                if (message.attention_raise != null && Object.hasOwnProperty.call(message, "attention_raise")) {
                    if (properties.command === 1)
                        return "command: multiple values";
                    properties.command = 1;
                    {
                        var error = $root.gensee.v2.AttentionRaise.verify(message.attention_raise, long + 1);
                        if (error)
                            return "attention_raise." + error;
                    }
                }
                if (message.attention_clear != null && Object.hasOwnProperty.call(message, "attention_clear")) {
                    if (properties.command === 1)
                        return "command: multiple values";
                    properties.command = 1;
                    {
                        var error = $root.gensee.v2.AttentionClear.verify(message.attention_clear, long + 1);
                        if (error)
                            return "attention_clear." + error;
                    }
                }
                if (message.executor_tool != null && Object.hasOwnProperty.call(message, "executor_tool")) {
                    if (properties.command === 1)
                        return "command: multiple values";
                    properties.command = 1;
                    {
                        var error = $root.gensee.v2.ExecutorTool.verify(message.executor_tool, long + 1);
                        if (error)
                            return "executor_tool." + error;
                    }
                }
                if (message.executor_denial != null && Object.hasOwnProperty.call(message, "executor_denial")) {
                    if (properties.command === 1)
                        return "command: multiple values";
                    properties.command = 1;
                    {
                        var error = $root.gensee.v2.ExecutorDenial.verify(message.executor_denial, long + 1);
                        if (error)
                            return "executor_denial." + error;
                    }
                }
                return null;
            };

            /**
             * Creates a ControlRequest message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ControlRequest
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ControlRequest} ControlRequest
             */
            ControlRequest.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ControlRequest)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ControlRequest: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ControlRequest();
                if (object.schema != null)
                    message.schema = object.schema >>> 0;
                if (object.policy_apply != null) {
                    if (!$util.isObject(object.policy_apply))
                        throw TypeError(".gensee.v2.ControlRequest.policy_apply: object expected");
                    message.policy_apply = $root.gensee.v2.PolicyApply.fromObject(object.policy_apply, long + 1);
                }
                if (object.lease_add != null) {
                    if (!$util.isObject(object.lease_add))
                        throw TypeError(".gensee.v2.ControlRequest.lease_add: object expected");
                    message.lease_add = $root.gensee.v2.LeaseAdd.fromObject(object.lease_add, long + 1);
                }
                if (object.lease_rm != null) {
                    if (!$util.isObject(object.lease_rm))
                        throw TypeError(".gensee.v2.ControlRequest.lease_rm: object expected");
                    message.lease_rm = $root.gensee.v2.LeaseRm.fromObject(object.lease_rm, long + 1);
                }
                if (object.attention_raise != null) {
                    if (!$util.isObject(object.attention_raise))
                        throw TypeError(".gensee.v2.ControlRequest.attention_raise: object expected");
                    message.attention_raise = $root.gensee.v2.AttentionRaise.fromObject(object.attention_raise, long + 1);
                }
                if (object.attention_clear != null) {
                    if (!$util.isObject(object.attention_clear))
                        throw TypeError(".gensee.v2.ControlRequest.attention_clear: object expected");
                    message.attention_clear = $root.gensee.v2.AttentionClear.fromObject(object.attention_clear, long + 1);
                }
                if (object.executor_tool != null) {
                    if (!$util.isObject(object.executor_tool))
                        throw TypeError(".gensee.v2.ControlRequest.executor_tool: object expected");
                    message.executor_tool = $root.gensee.v2.ExecutorTool.fromObject(object.executor_tool, long + 1);
                }
                if (object.executor_denial != null) {
                    if (!$util.isObject(object.executor_denial))
                        throw TypeError(".gensee.v2.ControlRequest.executor_denial: object expected");
                    message.executor_denial = $root.gensee.v2.ExecutorDenial.fromObject(object.executor_denial, long + 1);
                }
                return message;
            };

            /**
             * Creates a plain object from a ControlRequest message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ControlRequest
             * @static
             * @param {gensee.v2.ControlRequest} message ControlRequest
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ControlRequest.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults)
                    object.schema = 0;
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    object.schema = message.schema;
                if (message.policy_apply != null && Object.hasOwnProperty.call(message, "policy_apply")) {
                    object.policy_apply = $root.gensee.v2.PolicyApply.toObject(message.policy_apply, options, q + 1);
                    if (options.oneofs)
                        object.command = "policy_apply";
                }
                if (message.lease_add != null && Object.hasOwnProperty.call(message, "lease_add")) {
                    object.lease_add = $root.gensee.v2.LeaseAdd.toObject(message.lease_add, options, q + 1);
                    if (options.oneofs)
                        object.command = "lease_add";
                }
                if (message.lease_rm != null && Object.hasOwnProperty.call(message, "lease_rm")) {
                    object.lease_rm = $root.gensee.v2.LeaseRm.toObject(message.lease_rm, options, q + 1);
                    if (options.oneofs)
                        object.command = "lease_rm";
                }
                if (message.attention_raise != null && Object.hasOwnProperty.call(message, "attention_raise")) {
                    object.attention_raise = $root.gensee.v2.AttentionRaise.toObject(message.attention_raise, options, q + 1);
                    if (options.oneofs)
                        object.command = "attention_raise";
                }
                if (message.attention_clear != null && Object.hasOwnProperty.call(message, "attention_clear")) {
                    object.attention_clear = $root.gensee.v2.AttentionClear.toObject(message.attention_clear, options, q + 1);
                    if (options.oneofs)
                        object.command = "attention_clear";
                }
                if (message.executor_tool != null && Object.hasOwnProperty.call(message, "executor_tool")) {
                    object.executor_tool = $root.gensee.v2.ExecutorTool.toObject(message.executor_tool, options, q + 1);
                    if (options.oneofs)
                        object.command = "executor_tool";
                }
                if (message.executor_denial != null && Object.hasOwnProperty.call(message, "executor_denial")) {
                    object.executor_denial = $root.gensee.v2.ExecutorDenial.toObject(message.executor_denial, options, q + 1);
                    if (options.oneofs)
                        object.command = "executor_denial";
                }
                return object;
            };

            /**
             * Converts this ControlRequest to JSON.
             * @function toJSON
             * @memberof gensee.v2.ControlRequest
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ControlRequest.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ControlRequest;
        })();

        v2.ControlOk = (function() {

            /**
             * Properties of a ControlOk.
             * @memberof gensee.v2
             * @interface IControlOk
             * @property {string|null} [command] ControlOk command
             * @property {string|null} [fields_json] ControlOk fields_json
             */

            /**
             * Constructs a new ControlOk.
             * @memberof gensee.v2
             * @classdesc Represents a ControlOk.
             * @implements IControlOk
             * @constructor
             * @param {gensee.v2.IControlOk=} [properties] Properties to set
             */
            function ControlOk(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ControlOk command.
             * @member {string} command
             * @memberof gensee.v2.ControlOk
             * @instance
             */
            ControlOk.prototype.command = "";

            /**
             * ControlOk fields_json.
             * @member {string} fields_json
             * @memberof gensee.v2.ControlOk
             * @instance
             */
            ControlOk.prototype.fields_json = "";

            /**
             * Creates a new ControlOk instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ControlOk
             * @static
             * @param {gensee.v2.IControlOk=} [properties] Properties to set
             * @returns {gensee.v2.ControlOk} ControlOk instance
             */
            ControlOk.create = function create(properties) {
                return new ControlOk(properties);
            };

            /**
             * Encodes the specified ControlOk message. Does not implicitly {@link gensee.v2.ControlOk.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ControlOk
             * @static
             * @param {gensee.v2.IControlOk} message ControlOk message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ControlOk.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.command != null && Object.hasOwnProperty.call(message, "command"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.command);
                if (message.fields_json != null && Object.hasOwnProperty.call(message, "fields_json"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.fields_json);
                return writer;
            };

            /**
             * Decodes a ControlOk message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ControlOk
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ControlOk} ControlOk
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ControlOk.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.ControlOk();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.command = reader.string();
                            break;
                        }
                    case 2: {
                            message.fields_json = reader.string();
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
             * Verifies a ControlOk message.
             * @function verify
             * @memberof gensee.v2.ControlOk
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ControlOk.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.command != null && Object.hasOwnProperty.call(message, "command"))
                    if (!$util.isString(message.command))
                        return "command: string expected";
                if (message.fields_json != null && Object.hasOwnProperty.call(message, "fields_json"))
                    if (!$util.isString(message.fields_json))
                        return "fields_json: string expected";
                return null;
            };

            /**
             * Creates a ControlOk message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ControlOk
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ControlOk} ControlOk
             */
            ControlOk.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ControlOk)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ControlOk: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ControlOk();
                if (object.command != null)
                    message.command = String(object.command);
                if (object.fields_json != null)
                    message.fields_json = String(object.fields_json);
                return message;
            };

            /**
             * Creates a plain object from a ControlOk message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ControlOk
             * @static
             * @param {gensee.v2.ControlOk} message ControlOk
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ControlOk.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.command = "";
                    object.fields_json = "";
                }
                if (message.command != null && Object.hasOwnProperty.call(message, "command"))
                    object.command = message.command;
                if (message.fields_json != null && Object.hasOwnProperty.call(message, "fields_json"))
                    object.fields_json = message.fields_json;
                return object;
            };

            /**
             * Converts this ControlOk to JSON.
             * @function toJSON
             * @memberof gensee.v2.ControlOk
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ControlOk.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ControlOk;
        })();

        v2.ControlError = (function() {

            /**
             * Properties of a ControlError.
             * @memberof gensee.v2
             * @interface IControlError
             * @property {string|null} [code] ControlError code
             * @property {string|null} [message] ControlError message
             */

            /**
             * Constructs a new ControlError.
             * @memberof gensee.v2
             * @classdesc Represents a ControlError.
             * @implements IControlError
             * @constructor
             * @param {gensee.v2.IControlError=} [properties] Properties to set
             */
            function ControlError(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ControlError code.
             * @member {string} code
             * @memberof gensee.v2.ControlError
             * @instance
             */
            ControlError.prototype.code = "";

            /**
             * ControlError message.
             * @member {string} message
             * @memberof gensee.v2.ControlError
             * @instance
             */
            ControlError.prototype.message = "";

            /**
             * Creates a new ControlError instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ControlError
             * @static
             * @param {gensee.v2.IControlError=} [properties] Properties to set
             * @returns {gensee.v2.ControlError} ControlError instance
             */
            ControlError.create = function create(properties) {
                return new ControlError(properties);
            };

            /**
             * Encodes the specified ControlError message. Does not implicitly {@link gensee.v2.ControlError.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ControlError
             * @static
             * @param {gensee.v2.IControlError} message ControlError message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ControlError.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.code != null && Object.hasOwnProperty.call(message, "code"))
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.code);
                if (message.message != null && Object.hasOwnProperty.call(message, "message"))
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.message);
                return writer;
            };

            /**
             * Decodes a ControlError message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ControlError
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ControlError} ControlError
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ControlError.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.ControlError();
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
                            message.message = reader.string();
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
             * Verifies a ControlError message.
             * @function verify
             * @memberof gensee.v2.ControlError
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ControlError.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.code != null && Object.hasOwnProperty.call(message, "code"))
                    if (!$util.isString(message.code))
                        return "code: string expected";
                if (message.message != null && Object.hasOwnProperty.call(message, "message"))
                    if (!$util.isString(message.message))
                        return "message: string expected";
                return null;
            };

            /**
             * Creates a ControlError message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ControlError
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ControlError} ControlError
             */
            ControlError.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ControlError)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ControlError: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ControlError();
                if (object.code != null)
                    message.code = String(object.code);
                if (object.message != null)
                    message.message = String(object.message);
                return message;
            };

            /**
             * Creates a plain object from a ControlError message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ControlError
             * @static
             * @param {gensee.v2.ControlError} message ControlError
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ControlError.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    object.code = "";
                    object.message = "";
                }
                if (message.code != null && Object.hasOwnProperty.call(message, "code"))
                    object.code = message.code;
                if (message.message != null && Object.hasOwnProperty.call(message, "message"))
                    object.message = message.message;
                return object;
            };

            /**
             * Converts this ControlError to JSON.
             * @function toJSON
             * @memberof gensee.v2.ControlError
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ControlError.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ControlError;
        })();

        v2.ControlReply = (function() {

            /**
             * Properties of a ControlReply.
             * @memberof gensee.v2
             * @interface IControlReply
             * @property {number|null} [schema] ControlReply schema
             * @property {gensee.v2.IControlOk|null} [ok] ControlReply ok
             * @property {gensee.v2.IControlError|null} [error] ControlReply error
             */

            /**
             * Constructs a new ControlReply.
             * @memberof gensee.v2
             * @classdesc Represents a ControlReply.
             * @implements IControlReply
             * @constructor
             * @param {gensee.v2.IControlReply=} [properties] Properties to set
             */
            function ControlReply(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * ControlReply schema.
             * @member {number} schema
             * @memberof gensee.v2.ControlReply
             * @instance
             */
            ControlReply.prototype.schema = 0;

            /**
             * ControlReply ok.
             * @member {gensee.v2.IControlOk|null|undefined} ok
             * @memberof gensee.v2.ControlReply
             * @instance
             */
            ControlReply.prototype.ok = null;

            /**
             * ControlReply error.
             * @member {gensee.v2.IControlError|null|undefined} error
             * @memberof gensee.v2.ControlReply
             * @instance
             */
            ControlReply.prototype.error = null;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            /**
             * ControlReply outcome.
             * @member {"ok"|"error"|undefined} outcome
             * @memberof gensee.v2.ControlReply
             * @instance
             */
            Object.defineProperty(ControlReply.prototype, "outcome", {
                get: $util.oneOfGetter($oneOfFields = ["ok", "error"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Creates a new ControlReply instance using the specified properties.
             * @function create
             * @memberof gensee.v2.ControlReply
             * @static
             * @param {gensee.v2.IControlReply=} [properties] Properties to set
             * @returns {gensee.v2.ControlReply} ControlReply instance
             */
            ControlReply.create = function create(properties) {
                return new ControlReply(properties);
            };

            /**
             * Encodes the specified ControlReply message. Does not implicitly {@link gensee.v2.ControlReply.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.ControlReply
             * @static
             * @param {gensee.v2.IControlReply} message ControlReply message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ControlReply.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.schema);
                if (message.ok != null && Object.hasOwnProperty.call(message, "ok"))
                    $root.gensee.v2.ControlOk.encode(message.ok, writer.uint32(/* id 2, wireType 2 =*/18).fork(), q + 1).ldelim();
                if (message.error != null && Object.hasOwnProperty.call(message, "error"))
                    $root.gensee.v2.ControlError.encode(message.error, writer.uint32(/* id 3, wireType 2 =*/26).fork(), q + 1).ldelim();
                return writer;
            };

            /**
             * Decodes a ControlReply message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.ControlReply
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.ControlReply} ControlReply
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ControlReply.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.ControlReply();
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
                            message.ok = $root.gensee.v2.ControlOk.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 3: {
                            message.error = $root.gensee.v2.ControlError.decode(reader, reader.uint32(), undefined, long + 1);
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
             * Verifies a ControlReply message.
             * @function verify
             * @memberof gensee.v2.ControlReply
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            ControlReply.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                var properties = {};
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    if (!$util.isInteger(message.schema))
                        return "schema: integer expected";
                if (message.ok != null && Object.hasOwnProperty.call(message, "ok")) {
                    properties.outcome = 1;
                    {
                        var error = $root.gensee.v2.ControlOk.verify(message.ok, long + 1);
                        if (error)
                            return "ok." + error;
                    }
                }
                if (message.error != null && Object.hasOwnProperty.call(message, "error")) {
                    if (properties.outcome === 1)
                        return "outcome: multiple values";
                    properties.outcome = 1;
                    {
                        var error = $root.gensee.v2.ControlError.verify(message.error, long + 1);
                        if (error)
                            return "error." + error;
                    }
                }
                return null;
            };

            /**
             * Creates a ControlReply message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.ControlReply
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.ControlReply} ControlReply
             */
            ControlReply.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.ControlReply)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.ControlReply: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.ControlReply();
                if (object.schema != null)
                    message.schema = object.schema >>> 0;
                if (object.ok != null) {
                    if (!$util.isObject(object.ok))
                        throw TypeError(".gensee.v2.ControlReply.ok: object expected");
                    message.ok = $root.gensee.v2.ControlOk.fromObject(object.ok, long + 1);
                }
                if (object.error != null) {
                    if (!$util.isObject(object.error))
                        throw TypeError(".gensee.v2.ControlReply.error: object expected");
                    message.error = $root.gensee.v2.ControlError.fromObject(object.error, long + 1);
                }
                return message;
            };

            /**
             * Creates a plain object from a ControlReply message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.ControlReply
             * @static
             * @param {gensee.v2.ControlReply} message ControlReply
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            ControlReply.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults)
                    object.schema = 0;
                if (message.schema != null && Object.hasOwnProperty.call(message, "schema"))
                    object.schema = message.schema;
                if (message.ok != null && Object.hasOwnProperty.call(message, "ok")) {
                    object.ok = $root.gensee.v2.ControlOk.toObject(message.ok, options, q + 1);
                    if (options.oneofs)
                        object.outcome = "ok";
                }
                if (message.error != null && Object.hasOwnProperty.call(message, "error")) {
                    object.error = $root.gensee.v2.ControlError.toObject(message.error, options, q + 1);
                    if (options.oneofs)
                        object.outcome = "error";
                }
                return object;
            };

            /**
             * Converts this ControlReply to JSON.
             * @function toJSON
             * @memberof gensee.v2.ControlReply
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            ControlReply.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return ControlReply;
        })();

        v2.SignedControlReply = (function() {

            /**
             * Properties of a SignedControlReply.
             * @memberof gensee.v2
             * @interface ISignedControlReply
             * @property {Uint8Array|null} [reply] SignedControlReply reply
             * @property {Uint8Array|null} [mac] SignedControlReply mac
             */

            /**
             * Constructs a new SignedControlReply.
             * @memberof gensee.v2
             * @classdesc Represents a SignedControlReply.
             * @implements ISignedControlReply
             * @constructor
             * @param {gensee.v2.ISignedControlReply=} [properties] Properties to set
             */
            function SignedControlReply(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            /**
             * SignedControlReply reply.
             * @member {Uint8Array} reply
             * @memberof gensee.v2.SignedControlReply
             * @instance
             */
            SignedControlReply.prototype.reply = $util.newBuffer([]);

            /**
             * SignedControlReply mac.
             * @member {Uint8Array} mac
             * @memberof gensee.v2.SignedControlReply
             * @instance
             */
            SignedControlReply.prototype.mac = $util.newBuffer([]);

            /**
             * Creates a new SignedControlReply instance using the specified properties.
             * @function create
             * @memberof gensee.v2.SignedControlReply
             * @static
             * @param {gensee.v2.ISignedControlReply=} [properties] Properties to set
             * @returns {gensee.v2.SignedControlReply} SignedControlReply instance
             */
            SignedControlReply.create = function create(properties) {
                return new SignedControlReply(properties);
            };

            /**
             * Encodes the specified SignedControlReply message. Does not implicitly {@link gensee.v2.SignedControlReply.verify|verify} messages.
             * @function encode
             * @memberof gensee.v2.SignedControlReply
             * @static
             * @param {gensee.v2.ISignedControlReply} message SignedControlReply message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            SignedControlReply.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.reply != null && Object.hasOwnProperty.call(message, "reply"))
                    writer.uint32(/* id 1, wireType 2 =*/10).bytes(message.reply);
                if (message.mac != null && Object.hasOwnProperty.call(message, "mac"))
                    writer.uint32(/* id 2, wireType 2 =*/18).bytes(message.mac);
                return writer;
            };

            /**
             * Decodes a SignedControlReply message from the specified reader or buffer.
             * @function decode
             * @memberof gensee.v2.SignedControlReply
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {gensee.v2.SignedControlReply} SignedControlReply
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            SignedControlReply.decode = function decode(reader, length, error, long) {
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
                message = new $root.gensee.v2.SignedControlReply();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.reply = reader.bytes();
                            break;
                        }
                    case 2: {
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
             * Verifies a SignedControlReply message.
             * @function verify
             * @memberof gensee.v2.SignedControlReply
             * @static
             * @param {Object.<string,*>} message Plain object to verify
             * @returns {string|null} `null` if valid, otherwise the reason why it is not
             */
            SignedControlReply.verify = function verify(message, long) {
                if (typeof message !== "object" || message === null)
                    return "object expected";
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    return "maximum nesting depth exceeded";
                if (message.reply != null && Object.hasOwnProperty.call(message, "reply"))
                    if (!(message.reply && typeof message.reply.length === "number" || $util.isString(message.reply)))
                        return "reply: buffer expected";
                if (message.mac != null && Object.hasOwnProperty.call(message, "mac"))
                    if (!(message.mac && typeof message.mac.length === "number" || $util.isString(message.mac)))
                        return "mac: buffer expected";
                return null;
            };

            /**
             * Creates a SignedControlReply message from a plain object. Also converts values to their respective internal types.
             * @function fromObject
             * @memberof gensee.v2.SignedControlReply
             * @static
             * @param {Object.<string,*>} object Plain object
             * @returns {gensee.v2.SignedControlReply} SignedControlReply
             */
            SignedControlReply.fromObject = function fromObject(object, long) {
                if (object instanceof $root.gensee.v2.SignedControlReply)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".gensee.v2.SignedControlReply: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.gensee.v2.SignedControlReply();
                if (object.reply != null)
                    if (typeof object.reply === "string")
                        $util.base64.decode(object.reply, message.reply = $util.newBuffer($util.base64.length(object.reply)), 0);
                    else if (object.reply.length >= 0)
                        message.reply = object.reply;
                if (object.mac != null)
                    if (typeof object.mac === "string")
                        $util.base64.decode(object.mac, message.mac = $util.newBuffer($util.base64.length(object.mac)), 0);
                    else if (object.mac.length >= 0)
                        message.mac = object.mac;
                return message;
            };

            /**
             * Creates a plain object from a SignedControlReply message. Also converts values to other types if specified.
             * @function toObject
             * @memberof gensee.v2.SignedControlReply
             * @static
             * @param {gensee.v2.SignedControlReply} message SignedControlReply
             * @param {$protobuf.IConversionOptions} [options] Conversion options
             * @returns {Object.<string,*>} Plain object
             */
            SignedControlReply.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults) {
                    if (options.bytes === String)
                        object.reply = "";
                    else {
                        object.reply = [];
                        if (options.bytes !== Array)
                            object.reply = $util.newBuffer(object.reply);
                    }
                    if (options.bytes === String)
                        object.mac = "";
                    else {
                        object.mac = [];
                        if (options.bytes !== Array)
                            object.mac = $util.newBuffer(object.mac);
                    }
                }
                if (message.reply != null && Object.hasOwnProperty.call(message, "reply"))
                    object.reply = options.bytes === String ? $util.base64.encode(message.reply, 0, message.reply.length) : options.bytes === Array ? Array.prototype.slice.call(message.reply) : message.reply;
                if (message.mac != null && Object.hasOwnProperty.call(message, "mac"))
                    object.mac = options.bytes === String ? $util.base64.encode(message.mac, 0, message.mac.length) : options.bytes === Array ? Array.prototype.slice.call(message.mac) : message.mac;
                return object;
            };

            /**
             * Converts this SignedControlReply to JSON.
             * @function toJSON
             * @memberof gensee.v2.SignedControlReply
             * @instance
             * @returns {Object.<string,*>} JSON object
             */
            SignedControlReply.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            return SignedControlReply;
        })();

        return v2;
    })();

    return gensee;
})();

module.exports = $root;
